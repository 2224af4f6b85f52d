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
 * The UTF-16 code units of `text`, as an array. The scan below reads them there rather than with `charCodeAt`: V8
 * compiles a `charCodeAt` loop ~6 times slower in a process where some class extends `String` (ioredis's
 * `VerbatimString` does, and geohook's server loads ioredis), and typed array reads are not affected.
 */
function codeUnitsOf(text: string): Uint16Array {
  const units = new Uint16Array(text.length);
  Buffer.from(units.buffer).write(text, 'utf16le');
  return units;
}

/** Where the integers beyond 2^53 outside strings are in JSON text: their start and end offsets, in pairs. */
function unsafeIntegerSpans(text: string): number[] {
  const units = codeUnitsOf(text);
  const length = units.length;
  const spans: number[] = [];
  for (let index = 0; index < length; index += 1) {
    const code = units[index]!;
    if (code === QUOTE) {
      // Skip the string: to its closing quote, escapes included.
      for (index += 1; index < length; index += 1) {
        const inner = units[index];
        if (inner === BACKSLASH) index += 1;
        else if (inner === QUOTE) break;
      }
    } else if (code === MINUS || isDigit(code)) {
      const start = index;
      const first = code === MINUS ? index + 1 : index;
      let end = first;
      while (end < length && isDigit(units[end]!)) end += 1;
      const next = units[end];
      const integer = next !== DOT && next !== LOWER_E && next !== UPPER_E;
      if (integer && end - first >= MAX_SAFE.length && isUnsafeInteger(text.slice(first, end))) spans.push(start, end);
      // A fraction's or an exponent's digits belong to this number: not an integer of their own.
      if (!integer) while (end < length && isNumberPart(units[end]!)) end += 1;
      index = end - 1;
    }
  }
  return spans;
}

/**
 * Reads a change file's JSON as `JSON.parse` does, except that an integer beyond 2^53 (a BigInteger value) stays a
 * decimal string with every digit. Text that may hold such an integer is scanned once for those outside strings,
 * which are quoted, then handed to the native parser. Throws a `SyntaxError` for text that is not JSON.
 */
export function parseExactJson(text: string): unknown {
  const spans = MAYBE_UNSAFE_INTEGER.test(text) ? unsafeIntegerSpans(text) : [];
  if (spans.length === 0) return JSON.parse(text) as unknown;
  const pieces: string[] = [];
  let copied = 0;
  for (let index = 0; index < spans.length; index += 2) {
    const [start, end] = [spans[index]!, spans[index + 1]!];
    pieces.push(text.slice(copied, start), '"', text.slice(start, end), '"');
    copied = end;
  }
  pieces.push(text.slice(copied));
  return JSON.parse(pieces.join('')) as unknown;
}

/** `text` with every character a regular expression gives a meaning escaped. */
const literal = (text: string): RegExp['source'] => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * A parser of JSON text whose integers beyond 2^53 can only be the values of members named `keys` (a layer's
 * BigInteger and object id fields, in its `query` answers): as {@link parseExactJson} for those, found by their names
 * rather than by a scan of the whole text, so that a page of coordinates costs no more than `JSON.parse`. An unsafe
 * integer elsewhere is read as `JSON.parse` reads it. Throws a `SyntaxError` for text that is not JSON.
 *
 * The pattern is sound on JSON: a quote directly before `:` (spaces aside) is unescaped, so it closes a member's
 * name, and the quote before the name opens it (a name that merely ends so, such as `"a\"assessed_value"`, has an
 * unsafe value quoted too, as the scan would).
 */
export function keyedExactParser(keys: readonly string[]): (text: string) => unknown {
  if (keys.length === 0) return (text) => JSON.parse(text) as unknown;
  const member = new RegExp(`("(?:${keys.map(literal).join('|')})"\\s*:\\s*)(-?)(\\d{${MAX_SAFE.length},})(?![\\d.eE])`, 'g');
  const quoted = (whole: string, name: string, sign: string, digits: string): string =>
    isUnsafeInteger(digits) ? `${name}"${sign}${digits}"` : whole;
  return (text) => JSON.parse(text.replace(member, quoted)) as unknown;
}
