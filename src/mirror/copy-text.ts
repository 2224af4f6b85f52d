/** Characters COPY's text format escapes with a backslash, and their escapes. */
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const ESCAPED = /[\\\t\n\r]/;
const ESCAPED_ALL = new RegExp(ESCAPED.source, 'g');

/**
 * A value in COPY's text format: `\N` for NULL; backslash, tab, newline and carriage return escaped. Other
 * characters (quotes, any Unicode) are data as they are. A NUL character, which PostgreSQL's text cannot hold, is
 * refused by the server.
 */
export function copyText(value: string | null): string {
  if (value === null) return '\\N';
  return ESCAPED.test(value) ? value.replace(ESCAPED_ALL, (char) => ESCAPES[char]!) : value;
}

/** A value in COPY's text format when it holds no character to escape: `\N` for NULL, else the value itself. */
const plainText = (value: string | null): string => value ?? '\\N';

/**
 * A row's line in COPY's text format: its column values (as `RowColumns.values` gives them) tab-separated, then a
 * newline. `plain`: the values are known to hold no backslash, tab, newline or carriage return (see
 * {@link escapesNone}), and are not looked at.
 */
export function copyLine(values: readonly (string | null)[], plain = false): string {
  const text = plain ? plainText : copyText;
  let line = text(values[0] ?? null);
  for (let index = 1; index < values.length; index += 1) line += `\t${text(values[index] ?? null)}`;
  return `${line}\n`;
}

/**
 * Whether no string of JSON text `json` holds a character COPY escapes: JSON writes each of them in a string with a
 * backslash (a tab, newline or carriage return cannot stand in a string as it is), so text without a backslash has
 * none. A value made from such a string, a number or a date holds none either.
 */
export const escapesNone = (json: string): boolean => !json.includes('\\');
