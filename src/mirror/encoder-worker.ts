import { parentPort, threadId } from 'node:worker_threads';
import { keyedExactParser } from '../arcgis-request/parse-exact-json.js';
import { utf8Text } from '../arcgis-request/utf8-text.js';
import type { MirrorLayer } from './column-types.js';
import { encodePage } from './encode-page.js';
import { rowColumnsOf, type EsriRow, type RowColumns } from './row-values.js';

/**
 * What an encoder thread is asked (see `encoder-thread.ts`): the bytes of one `query` answer of a layer
 * (`page-encoder.ts`), or rows of a layer (`row-encoder.ts`).
 */
export type EncodeRequest =
  | { id: number; kind: 'page'; layer: MirrorLayer; body: Uint8Array<ArrayBuffer> }
  | { id: number; kind: 'rows'; layer: MirrorLayer; rows: readonly EsriRow[] };

/** The values of rows, and the thread that encoded them. */
export interface EncodedRows {
  values: (string | null)[][];
  threadId: number;
}

/** How a layer's pages are read and encoded. */
interface PageCoding {
  columns: RowColumns;
  parse: (text: string) => unknown;
}

/** The coding of the layer whose page came last, by the layer as JSON: a copy asks for one layer's pages at a time. */
let last: { key: string; coding: PageCoding } | undefined;

function pageCodingOf(layer: MirrorLayer): PageCoding {
  const key = JSON.stringify(layer);
  if (last?.key !== key) {
    const columns = rowColumnsOf(layer);
    // Only a column of 64-bit integers (a BigInteger or an object id field) keeps an integer beyond 2^53.
    const exact = columns.names.filter((_, index) => columns.sqlTypes[index] === 'bigint');
    last = { key, coding: { columns, parse: keyedExactParser(exact) } };
  }
  return last.coding;
}
parentPort?.on('message', (request: EncodeRequest) => {
  const { id } = request;
  try {
    if (request.kind === 'rows') {
      const values = request.rows.map(rowColumnsOf(request.layer).values);
      parentPort?.postMessage({ id, result: { values, threadId } satisfies EncodedRows });
      return;
    }
    const { columns, parse } = pageCodingOf(request.layer);
    const page = encodePage(utf8Text(request.body), parse, columns, request.layer.objectIdField);
    parentPort?.postMessage({ id, result: page }, [page.lines.buffer]);
  } catch (err) {
    const { name, message } = err instanceof Error ? err : new Error(String(err));
    const code = (err as { code?: unknown }).code;
    parentPort?.postMessage({ id, error: { name, message, ...(typeof code === 'string' ? { code } : {}) } });
  }
});
