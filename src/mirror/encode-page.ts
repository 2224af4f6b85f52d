import { copyLine } from './copy-text.js';
import type { EsriRow, RowColumns } from './row-values.js';

const encoder = new TextEncoder();

/** A page of a layer's `query`, its rows encoded as COPY lines. */
export interface EncodedPage {
  /** The answer's top-level values but its features (what the session checks for an error). */
  root: Record<string, unknown>;
  rows: number;
  /** The object id of the last row. */
  lastObjectId: unknown;
  /** The rows in COPY's text format, a line each (see {@link copyLine}), as UTF-8 in an array buffer of their own. */
  lines: Uint8Array<ArrayBuffer>;
}

/**
 * Reads a `query` answer (JSON text, with `parse`: BigInteger values exact, see `keyedExactParser`) and encodes its
 * features as the COPY lines of a layer table's `columns`. Throws a `SyntaxError` for text that is not JSON, a
 * `TypeError` for JSON that is not an object or a row the table cannot hold.
 */
export function encodePage(text: string, parse: (text: string) => unknown, columns: RowColumns, objectIdField: string): EncodedPage {
  const answer = parse(text);
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new TypeError('the answer is not a JSON object');
  const { features, ...root } = answer as Record<string, unknown>;
  const rows = Array.isArray(features) ? (features as EsriRow[]) : [];
  let lines = '';
  for (const row of rows) lines += copyLine(columns.values(row));
  return { root, rows: rows.length, lastObjectId: rows.at(-1)?.attributes[objectIdField], lines: encoder.encode(lines) };
}
