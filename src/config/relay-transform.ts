import { jsonata } from '../commonjs/jsonata.js';

/** Longest `transform` a route takes, in characters. */
export const MAX_TRANSFORM_CHARS = 20_000;

/** What JSONata's parser throws: a plain object with a code, a message and where it stopped. */
interface JsonataSyntaxError {
  code?: unknown;
  message?: unknown;
  position?: unknown;
  token?: unknown;
}

/** `line L, column C` of a 1-based character `position` of `text` (JSONata's positions count from 1). */
export function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, Math.max(0, position - 1));
  const lineStart = before.lastIndexOf('\n') + 1;
  return `line ${before.split('\n').length}, column ${before.length - lineStart + 1}`;
}

/**
 * Why a route's `transform` is not a JSONata expression, with where (line and column) and JSONata's own code, or
 * undefined when it parses. Only parsed here: the relay compiles it once when the route starts.
 */
export function transformSyntaxError(expression: string): string | undefined {
  try {
    jsonata(expression);
    return undefined;
  } catch (err) {
    const { code, message, position, token } = (err ?? {}) as JsonataSyntaxError;
    const text = typeof message === 'string' ? message : String(err);
    const at =
      token === '(end)' || typeof position !== 'number' ? 'at the end of the expression' : `at ${lineAndColumn(expression, position)}`;
    return `${text} ${at}${typeof code === 'string' ? ` (JSONata ${code})` : ''}`;
  }
}
