/** The only writer to stdout and stderr in geohook: every command prints through here. */

/** Writes one line to stdout. */
export function printLine(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Writes a value as one JSON line to stdout. */
export function printJson(value: unknown): void {
  printLine(JSON.stringify(value));
}

/** Writes `geohook: <message>` to stderr. */
export function printError(message: string): void {
  process.stderr.write(`geohook: ${message}\n`);
}
