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

/**
 * `JSON.stringify` that writes a `bigint` as a bare JSON number with every digit, as the real product writes
 * BigInteger values. A value without a `bigint` is written natively (`JSON.stringify` refuses a `bigint` with a
 * `TypeError`); otherwise each `bigint` is written as a string holding a marker no other string of this call can
 * contain, then unquoted.
 */
export function stringifyExact(value: unknown, space?: number): string {
  try {
    return JSON.stringify(value, undefined, space);
  } catch (err) {
    if (!(err instanceof TypeError && /BigInt/i.test(err.message))) throw err;
  }
  let marker: string | undefined;
  const text = JSON.stringify(
    value,
    (_key, item: unknown) => (typeof item === 'bigint' ? `${(marker ??= `bigint-${randomBytes(9).toString('base64url')}:`)}${item}` : item),
    space,
  );
  return marker === undefined ? text : text.replaceAll(new RegExp(`"${marker}(-?\\d+)"`, 'g'), '$1');
}
