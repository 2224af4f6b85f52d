import { isInteger, parse } from 'lossless-json';

/** A number as JSON text: a `number`, or, for an integer beyond 2^53 that a `number` would round, its decimal string. */
function exactNumber(text: string): number | string {
  const value = Number(text);
  return isInteger(text) && !Number.isSafeInteger(value) ? text : value;
}

/**
 * Reads a change file's JSON as `JSON.parse` does, except that an integer beyond 2^53 (a BigInteger value) stays a
 * decimal string with every digit. Throws a `SyntaxError` for text that is not JSON.
 */
export function parseExactJson(text: string): unknown {
  try {
    return parse(text, undefined, exactNumber);
  } catch (err) {
    throw err instanceof SyntaxError ? err : new SyntaxError((err as Error).message);
  }
}
