import { parentPort, workerData } from 'node:worker_threads';
import type { MirrorLayer } from './column-types.js';
import { encodePage } from './encode-page.js';
import { rowColumnsOf } from './row-values.js';

/** What the page encoder is asked: the bytes of one `query` answer (see `page-encoder.ts`). */
export interface EncodeRequest {
  id: number;
  body: Uint8Array<ArrayBuffer>;
}

const layer = (workerData as { layer: MirrorLayer }).layer;
const columns = rowColumnsOf(layer);
const decoder = new TextDecoder();

parentPort?.on('message', ({ id, body }: EncodeRequest) => {
  try {
    const page = encodePage(decoder.decode(body), columns, layer.objectIdField);
    parentPort?.postMessage({ id, page }, [page.lines.buffer]);
  } catch (err) {
    const { name, message } = err instanceof Error ? err : new Error(String(err));
    parentPort?.postMessage({ id, error: { name, message } });
  }
});
