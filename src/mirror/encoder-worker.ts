import { parentPort, threadId, workerData } from 'node:worker_threads';
import { keyedExactParser } from '../arcgis-request/parse-exact-json.js';
import type { MirrorLayer } from './column-types.js';
import { encodePage } from './encode-page.js';
import { rowColumnsOf, type EsriRow } from './row-values.js';

/**
 * What an encoder thread is asked (see `encoder-thread.ts`): the bytes of one `query` answer of the layer the thread
 * was started for (`page-encoder.ts`), or rows of any layer (`row-encoder.ts`).
 */
export type EncodeRequest =
  { id: number; kind: 'page'; body: Uint8Array<ArrayBuffer> } | { id: number; kind: 'rows'; layer: MirrorLayer; rows: readonly EsriRow[] };

/** What the thread was started with: the layer whose pages it encodes, if any. */
export interface EncoderWorkerData {
  pageLayer?: MirrorLayer;
}

/** The values of rows, and the thread that encoded them. */
export interface EncodedRows {
  values: (string | null)[][];
  threadId: number;
}

const { pageLayer } = workerData as EncoderWorkerData;
const pageColumns = pageLayer === undefined ? undefined : rowColumnsOf(pageLayer);
/** Only a BigInteger or an object id field can hold an integer beyond 2^53 that its column keeps. */
const parsePage = keyedExactParser(
  (pageLayer?.fields ?? []).filter(({ type }) => type === 'esriFieldTypeBigInteger' || type === 'esriFieldTypeOID').map(({ name }) => name),
);
const decoder = new TextDecoder();

parentPort?.on('message', (request: EncodeRequest) => {
  const { id } = request;
  try {
    if (request.kind === 'rows') {
      const values = request.rows.map(rowColumnsOf(request.layer).values);
      parentPort?.postMessage({ id, result: { values, threadId } satisfies EncodedRows });
      return;
    }
    if (pageLayer === undefined || pageColumns === undefined) throw new Error('this encoder thread has no layer to encode pages of');
    const page = encodePage(decoder.decode(request.body), parsePage, pageColumns, pageLayer.objectIdField);
    parentPort?.postMessage({ id, result: page }, [page.lines.buffer]);
  } catch (err) {
    const { name, message } = err instanceof Error ? err : new Error(String(err));
    const code = (err as { code?: unknown }).code;
    parentPort?.postMessage({ id, error: { name, message, ...(typeof code === 'string' ? { code } : {}) } });
  }
});
