import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { qualifiedName, quoteIdentifier, type LayerTable } from './column-types.js';
import { rowColumnsOf, type EsriRow } from './row-values.js';

/** Characters COPY's text format escapes with a backslash, and their escapes. */
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const ESCAPED = /[\\\t\n\r]/;
const ESCAPED_ALL = new RegExp(ESCAPED.source, 'g');

/**
 * A value in COPY's text format: `\N` for NULL; backslash, tab, newline and carriage return escaped. Other
 * characters (quotes, any Unicode) are data as they are. A NUL character, which PostgreSQL's text cannot hold, is
 * refused by the server.
 */
export function copyText(value: string | null): string {
  if (value === null) return '\\N';
  return ESCAPED.test(value) ? value.replace(ESCAPED_ALL, (char) => ESCAPES[char]!) : value;
}

/** A row's line in COPY's text format: its column values (as `RowColumns.values` gives them) tab-separated, then a newline. */
export function copyLine(values: readonly (string | null)[]): string {
  let line = copyText(values[0] ?? null);
  for (let index = 1; index < values.length; index += 1) line += `\t${copyText(values[index] ?? null)}`;
  return `${line}\n`;
}

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

/**
 * Writes rows (Esri features: attributes and geometry), given in pages (as `query` reads them), into a layer's
 * table with `COPY … FROM STDIN` (text format), streamed with backpressure: the bulk path of the mirror's initial
 * copy. Runs in the client's current transaction, if any. Resolves to the number of rows written; rejects (and the
 * server writes none of them) on the first bad row.
 */
export async function copyRows(
  client: pg.ClientBase,
  target: LayerTable,
  pages: Iterable<readonly EsriRow[]> | AsyncIterable<readonly EsriRow[]>,
): Promise<number> {
  const columns = rowColumnsOf(target.layer);
  const sql = `COPY ${qualifiedName(target.schema, target.table)} (${columns.names.map(quoteIdentifier).join(', ')}) FROM STDIN`;
  const stream = client.query(copyFrom(sql));
  await pipeline(Readable.from(copyChunks(pages, columns.values)), stream);
  return stream.rowCount;
}
