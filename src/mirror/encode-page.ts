import { copyLine, escapesNone } from './copy-text.js';
import type { EsriRow, RowColumns } from './row-values.js';

/**
 * Lines written as UTF-8 into one array buffer that grows as needed: no string of the whole page is built and
 * encoded again.
 */
class LineBuffer {
  #bytes: Buffer;
  #length = 0;

  constructor(capacity: number) {
    this.#bytes = Buffer.allocUnsafeSlow(Math.max(capacity, 1024));
  }

  write(line: string): void {
    // A UTF-16 code unit takes 3 bytes of UTF-8 at most.
    const needed = this.#length + line.length * 3;
    if (needed > this.#bytes.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.#bytes.length * 2, needed));
      this.#bytes.copy(bigger, 0, 0, this.#length);
      this.#bytes = bigger;
    }
    this.#length += this.#bytes.write(line, this.#length, 'utf8');
  }

  /** The bytes written, over an array buffer of their own. */
  get bytes(): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.#bytes.buffer as ArrayBuffer, 0, this.#length);
  }
}

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
  // The lines take about as many bytes as the answer's text.
  const lines = new LineBuffer(text.length);
  const plain = escapesNone(text);
  for (const row of rows) lines.write(copyLine(columns.values(row), plain));
  return { root, rows: rows.length, lastObjectId: rows.at(-1)?.attributes[objectIdField], lines: lines.bytes };
}
