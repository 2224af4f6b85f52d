import { randomBytes } from 'node:crypto';
import { isInteger, parse } from 'lossless-json';

/** A number as JSON text: a `number`, or a `bigint` for an integer beyond 2^53 that a `number` would round. */
function exactNumber(text: string): number | bigint {
  const value = Number(text);
  return isInteger(text) && !Number.isSafeInteger(value) ? BigInt(text) : value;
}

/**
 * Parses JSON as `JSON.parse` does, except that an integer beyond 2^53 becomes a `bigint` with every digit kept
 * (a BigInteger field's value). Throws a `SyntaxError` for text that is not JSON.
 */
export function parseExactJson(text: string): unknown {
  try {
    return parse(text, undefined, exactNumber);
  } catch (err) {
    // Nesting deep enough to exhaust the stack is malformed input too.
    throw err instanceof SyntaxError ? err : new SyntaxError((err as Error).message);
  }
}

/** Stand-ins for `bigint`s in a value to be written as JSON, and the text with them turned back into bare numbers. */
export interface BigIntMarks {
  /** `item`, or for a `bigint` a string holding a marker no other string of this answer can contain, and its digits. */
  mark(item: unknown): unknown;
  /** JSON text written from marked values, each marked `bigint` a bare JSON number with every digit. */
  unmark(text: string): string;
}

/**
 * Marks for one answer: for a large value whose `bigint`s the caller knows where to find (a query's attribute values),
 * marked as it is built, then written with the native `JSON.stringify` (a replacer would visit every value).
 */
export function bigIntMarks(): BigIntMarks {
  let marker: string | undefined;
  return {
    mark: (item) => (typeof item === 'bigint' ? `${(marker ??= `bigint-${randomBytes(9).toString('base64url')}:`)}${item}` : item),
    unmark: (text) => (marker === undefined ? text : text.replaceAll(new RegExp(`"${marker}(-?\\d+)"`, 'g'), '$1')),
  };
}

/**
 * `JSON.stringify` that writes a `bigint` as a bare JSON number with every digit, as the real product writes
 * BigInteger values. A value without a `bigint` is written natively (`JSON.stringify` refuses a `bigint` with a
 * `TypeError`); otherwise every value is marked ({@link bigIntMarks}) as it is written.
 */
export function stringifyExact(value: unknown, space?: number): string {
  try {
    return JSON.stringify(value, undefined, space);
  } catch (err) {
    if (!(err instanceof TypeError && /BigInt/i.test(err.message))) throw err;
  }
  const marks = bigIntMarks();
  return marks.unmark(JSON.stringify(value, (_key, item: unknown) => marks.mark(item), space));
}
