const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** The largest safe integer's digits: an integer of as many digits is unsafe when it sorts after them. */
const MAX_SAFE = String(Number.MAX_SAFE_INTEGER);

const isDigit = (code: number): boolean => code >= ZERO && code <= NINE;

/** Whether `digits` (no sign, no leading zero) is an integer beyond 2^53. */
export const isUnsafeInteger = (digits: string): boolean =>
  digits.length > MAX_SAFE.length || (digits.length === MAX_SAFE.length && digits > MAX_SAFE);

/**
 * Reads a change file's JSON as `JSON.parse` does, except that an integer beyond 2^53 (a BigInteger value) stays a
 * decimal string with every digit. The text is scanned once for such integers outside strings, which are quoted,
 * then handed to the native parser. Throws a `SyntaxError` for text that is not JSON.
 */
export function parseExactJson(text: string): unknown {
  let out: string[] | undefined;
  let copied = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      // Skip the string: to its closing quote, escapes included.
      for (index += 1; index < text.length; index += 1) {
        const inner = text.charCodeAt(index);
        if (inner === BACKSLASH) index += 1;
        else if (inner === QUOTE) break;
      }
    } else if (code === MINUS || isDigit(code)) {
      const start = index;
      let end = index + (code === MINUS ? 1 : 0);
      while (end < text.length && isDigit(text.charCodeAt(end))) end += 1;
      const next = text.charCodeAt(end);
      const integer = next !== DOT && next !== LOWER_E && next !== UPPER_E;
      const digits = text.slice(code === MINUS ? start + 1 : start, end);
      if (integer && digits.length >= MAX_SAFE.length && isUnsafeInteger(digits)) {
        out ??= [];
        out.push(text.slice(copied, start), '"', text.slice(start, end), '"');
        copied = end;
      }
      index = end - 1;
    }
  }
  return JSON.parse(out === undefined ? text : out.join('') + text.slice(copied)) as unknown;
}
