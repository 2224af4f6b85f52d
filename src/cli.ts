#!/usr/bin/env node
import { printError } from './cli/print.js';
import { buildProgram } from './cli/program.js';
import { GeohookError } from './errors.js';

/** The command the arguments name (`geohook help <command>` included), if any. */
function invokedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

try {
  const invoked = invokedCommand(process.argv.slice(2));
  const program = await buildProgram((name) => name === invoked);
  await program.parseAsync();
} catch (err) {
  printError(err instanceof GeohookError ? err.message : `unexpected error: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
}
