/** The only writer to stdout and stderr in geohook: every command prints through here. */

/** Writes one line to stdout. */
export function printLine(text: string): void {
  process.stdout.write(`${text}\n`);
}

/**
 * Writes a value as one JSON line to stdout. DEL and the C1 control characters (a terminal may take U+009B for
 * ESC [) are written as `\u` escapes, which JSON.stringify leaves raw: the same JSON, nothing a terminal obeys.
 */
export function printJson(value: unknown): void {
  printLine(
    JSON.stringify(value).replace(/[\u007f-\u009f]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
}

/** Writes a line for a person to stderr (stdout may be carrying data). */
export function printNotice(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Writes `geohook: <message>` to stderr, each line of a message of several (one per problem) so prefixed. */
export function printError(message: string): void {
  process.stderr.write(`${message.replace(/^/gm, 'geohook: ')}\n`);
}

/** Control characters (C0, DEL, C1), the Unicode line separators, and the bidirectional overrides and isolates. */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu;

/**
 * `text` as one line a terminal shows as it is: no escape sequence (a name from a payload may hold ESC [ 2 J),
 * no bell, no line break or reordering; a tab or line break becomes a space, anything else is dropped.
 */
function printable(text: string): string {
  return text.replace(UNPRINTABLE, (character) => (/\s/.test(character) ? ' ' : ''));
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  return printable(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/**
 * Writes rows as an aligned text table (`--table`): the columns given, or every key of the rows. A single
 * object is shown as a two-column table of its fields.
 */
export function printTable(value: unknown, columns?: readonly string[]): void {
  const rows: Record<string, unknown>[] = Array.isArray(value)
    ? (value as Record<string, unknown>[])
    : Object.entries((value ?? {}) as Record<string, unknown>).map(([field, fieldValue]) => ({ field, value: fieldValue }));
  const keys = columns ?? [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const table = [keys.map(printable), ...rows.map((row) => keys.map((key) => cell(row[key])))];
  const widths = keys.map((_key, index) => Math.max(...table.map((line) => line[index]!.length)));
  for (const line of table)
    printLine(
      line
        .map((text, index) => text.padEnd(widths[index]!))
        .join('  ')
        .trimEnd(),
    );
}

/** Prints `result` as one JSON document, or as a table of `columns` with `--table`. */
export function printResult(result: unknown, flags: { table?: boolean }, columns?: readonly string[]): void {
  if (flags.table === true) printTable(result, columns);
  else printJson(result);
}
