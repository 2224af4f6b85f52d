/** The only writer to stdout and stderr in geohook: every command prints through here. */

/** Writes one line to stdout. */
export function printLine(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Writes a value as one JSON line to stdout. */
export function printJson(value: unknown): void {
  printLine(JSON.stringify(value));
}

/** Writes a line for a person to stderr (stdout may be carrying data). */
export function printNotice(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Writes `geohook: <message>` to stderr. */
export function printError(message: string): void {
  process.stderr.write(`geohook: ${message}\n`);
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
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
  const table = [keys, ...rows.map((row) => keys.map((key) => cell(row[key])))];
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
