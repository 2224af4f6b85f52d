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

/** A row's line in COPY's text format: its column values (as `RowColumns.values` gives them) tab-separated, then a newline. */
export function copyLine(values: readonly (string | null)[]): string {
  let line = copyText(values[0] ?? null);
  for (let index = 1; index < values.length; index += 1) line += `\t${copyText(values[index] ?? null)}`;
  return `${line}\n`;
}
