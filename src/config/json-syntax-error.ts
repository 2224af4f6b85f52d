import { parse } from 'lossless-json';

/** What the reader wanted where it stopped, by the start of lossless-json's message. */
const EXPECTED: readonly (readonly [RegExp, string])[] = [
  [/^Quoted object key or end/, 'expected a quoted key or "}"'],
  [/^Quoted object key/, 'expected a quoted key'],
  [/^Array item or end/, 'expected a value or "]"'],
  [/^(JSON value|Array item|Object value)/, 'expected a value'],
  [/^Comma/, 'expected ","'],
  [/^Colon/, 'expected ":"'],
  [/^Expected end of input/, 'expected the end of the file'],
  [/^End of string/, 'a string is not closed'],
];

/** The likely mistake behind an unexpected character, from the character and the one before it; '' when none is. */
function hint(found: string | undefined, before: string | undefined, expected: string | undefined): string {
  if ((found === '}' || found === ']') && before === ',') return ' — a trailing comma?';
  if (expected === 'expected ","') return ' — a missing comma?';
  if (found === '/' || found === '#') return ' — JSON has no comments';
  if (found === "'") return ' — JSON strings take double quotes';
  if (found === undefined) return ' — a missing "}" or "]"?';
  return '';
}

/** `line 7, column 3` of a zero-based character position. */
function lineAndColumn(text: string, position: number): string {
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  return `line ${line}, column ${position - before.lastIndexOf('\n')}`;
}

/**
 * Where a text that JSON.parse refused goes wrong, in one line: `line 7, column 3: unexpected "}" — a trailing
 * comma?`. Only the one character found there is quoted, never the text around it (it may hold secrets).
 */
export function describeJsonSyntaxError(text: string): string {
  let message: string;
  try {
    parse(text, undefined, { onDuplicateKey: ({ newValue }) => newValue });
    return 'not valid JSON';
  } catch (err) {
    message = (err as Error).message;
  }
  const position = Number(/at position (\d+)/.exec(message)?.[1] ?? text.length);
  const found = position < text.length ? text[position] : undefined;
  const before = /(\S)\s*$/.exec(text.slice(0, position))?.[1];
  const expected = EXPECTED.find(([pattern]) => pattern.test(message))?.[1];
  const what = found === undefined ? 'the file ends early' : `unexpected ${JSON.stringify(found)}`;
  const likely = hint(found, before, expected);
  return `${lineAndColumn(text, position)}: ${what}${likely === '' && expected !== undefined ? `; ${expected}` : likely}`;
}
