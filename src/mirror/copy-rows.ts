import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { qualifiedName, quoteIdentifier, type LayerTable } from './column-types.js';
import { rowColumnsOf, type EsriRow } from './row-values.js';

/** Characters COPY's text format escapes with a backslash, and their escapes. */
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * A value in COPY's text format: `\N` for NULL; backslash, tab, newline and carriage return escaped. Other
 * characters (quotes, any Unicode) are data as they are. A NUL character, which PostgreSQL's text cannot hold, is
 * refused by the server.
 */
export function copyText(value: string | null): string {
  return value === null ? '\\N' : value.replace(/[\\\t\n\r]/g, (char) => ESCAPES[char]!);
}

/** Rows a COPY chunk carries at most: lines are joined into strings of about this many rows before they are written. */
const ROWS_PER_CHUNK = 500;

async function* copyLines(rows: Iterable<EsriRow> | AsyncIterable<EsriRow>, values: (row: EsriRow) => (string | null)[]) {
  let chunk = '';
  let count = 0;
  for await (const row of rows) {
    chunk += `${values(row).map(copyText).join('\t')}\n`;
    count += 1;
    if (count === ROWS_PER_CHUNK) {
      yield chunk;
      chunk = '';
      count = 0;
    }
  }
  if (chunk !== '') yield chunk;
}

/**
 * Writes rows (Esri features: attributes and geometry) into a layer's table with `COPY … FROM STDIN` (text
 * format), streamed with backpressure: the bulk path of the mirror's initial copy. Runs in the client's current
 * transaction, if any. Resolves to the number of rows written; rejects (and the server writes none of them) on
 * the first bad row.
 */
export async function copyRows(
  client: pg.ClientBase,
  target: LayerTable,
  rows: Iterable<EsriRow> | AsyncIterable<EsriRow>,
): Promise<number> {
  const columns = rowColumnsOf(target.layer);
  const sql = `COPY ${qualifiedName(target.schema, target.table)} (${columns.names.map(quoteIdentifier).join(', ')}) FROM STDIN`;
  const stream = client.query(copyFrom(sql));
  await pipeline(Readable.from(copyLines(rows, columns.values)), stream);
  return stream.rowCount;
}
