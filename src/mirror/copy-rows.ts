import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { loadPgCopyStreams } from '../commonjs/pg-copy-streams.js';
import { qualifiedName, quoteIdentifier, type LayerTable } from './column-types.js';
import { copyLine } from './copy-text.js';
import type { EncodedPage } from './encode-page.js';
import { rowColumnsOf, type EsriRow } from './row-values.js';

/** Rows a COPY chunk carries at most: a page's lines are joined into strings of at most this many rows. */
const ROWS_PER_CHUNK = 500;

async function* copyChunks(
  pages: Iterable<readonly EsriRow[]> | AsyncIterable<readonly EsriRow[]>,
  values: (row: EsriRow) => (string | null)[],
) {
  for await (const page of pages) {
    for (let start = 0; start < page.length; start += ROWS_PER_CHUNK) {
      let chunk = '';
      for (const row of page.slice(start, start + ROWS_PER_CHUNK)) chunk += copyLine(values(row));
      yield chunk;
    }
  }
}

async function* linesOf(pages: AsyncIterable<EncodedPage>) {
  for await (const { lines } of pages) if (lines.length > 0) yield Buffer.from(lines.buffer, lines.byteOffset, lines.length);
}

/**
 * Writes COPY text (lines of the table's columns, see {@link copyLine}), in chunks (strings, or their UTF-8), with
 * `COPY … FROM STDIN`, streamed with backpressure. Resolves to the number of rows written; rejects (and the server
 * writes none) on the first bad row.
 */
async function copyLines(client: pg.ClientBase, target: LayerTable, chunks: AsyncIterable<string | Buffer>): Promise<number> {
  const { names } = rowColumnsOf(target.layer);
  const sql = `COPY ${qualifiedName(target.schema, target.table)} (${names.map(quoteIdentifier).join(', ')}) FROM STDIN`;
  const stream = client.query(loadPgCopyStreams().from(sql));
  await pipeline(Readable.from(chunks), stream);
  return stream.rowCount;
}

/**
 * Writes rows (Esri features: attributes and geometry), given in pages (as `query` reads them), into a layer's
 * table with `COPY … FROM STDIN` (text format), streamed with backpressure: the bulk path of the mirror's initial
 * copy. Runs in the client's current transaction, if any. Resolves to the number of rows written; rejects (and the
 * server writes none of them) on the first bad row.
 */
export function copyRows(
  client: pg.ClientBase,
  target: LayerTable,
  pages: Iterable<readonly EsriRow[]> | AsyncIterable<readonly EsriRow[]>,
): Promise<number> {
  return copyLines(client, target, copyChunks(pages, rowColumnsOf(target.layer).values));
}

/** {@link copyRows} for pages already encoded as COPY lines (by the page encoder, see `page-encoder.ts`). */
export function copyEncodedPages(client: pg.ClientBase, target: LayerTable, pages: AsyncIterable<EncodedPage>): Promise<number> {
  return copyLines(client, target, linesOf(pages));
}
