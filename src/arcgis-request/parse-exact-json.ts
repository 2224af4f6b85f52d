const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const PLUS = 0x2b;
const ZERO = 0x30;
const NINE = 0x39;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** The largest safe integer's digits: an integer of as many digits is unsafe when it sorts after them. */
const MAX_SAFE = String(Number.MAX_SAFE_INTEGER);

const isDigit = (code: number): boolean => code >= ZERO && code <= NINE;
/** A character a JSON number can hold after its integer part. */
const isNumberPart = (code: number): boolean =>
  isDigit(code) || code === DOT || code === LOWER_E || code === UPPER_E || code === PLUS || code === MINUS;

/** Whether `digits` (no sign, no leading zero) is an integer beyond 2^53. */
export const isUnsafeInteger = (digits: string): boolean =>
  digits.length > MAX_SAFE.length || (digits.length === MAX_SAFE.length && digits > MAX_SAFE);

/**
 * A run of 16 digits (as many as 2^53 has) that does not continue a number's fraction or exponent: every integer
 * beyond 2^53 matches, and text without a match has none (then it needs no scan). Digits inside strings match
 * too; the scan tells them apart.
 */
const MAYBE_UNSAFE_INTEGER = /(?:^|[^\d.eE+-])-?\d{16}/;

/**
 * Reads a change file's JSON as `JSON.parse` does, except that an integer beyond 2^53 (a BigInteger value) stays a
 * decimal string with every digit. Text that may hold such an integer is scanned once for those outside strings,
 * which are quoted, then handed to the native parser. Throws a `SyntaxError` for text that is not JSON.
 */
export function parseExactJson(text: string): unknown {
  if (!MAYBE_UNSAFE_INTEGER.test(text)) return JSON.parse(text) as unknown;
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
      // A fraction's or an exponent's digits belong to this number: not an integer of their own.
      if (!integer) while (end < text.length && isNumberPart(text.charCodeAt(end))) end += 1;
      index = end - 1;
    }
  }
  return JSON.parse(out === undefined ? text : out.join('') + text.slice(copied)) as unknown;
}
