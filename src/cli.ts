#!/usr/bin/env node
import { boundHeapGrowth } from './cli/heap-growth.js';
import { printError } from './cli/print.js';
import { buildProgram } from './cli/program.js';
import { GeohookError } from './errors.js';

/** The command the arguments name (`geohook help <command>` included), if any. */
function invokedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((arg) => !arg.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

// Every command runs with it: the long-running ones (`serve`, `up`, `emulator`) are what it is for.
boundHeapGrowth();
try {
  const invoked = invokedCommand(process.argv.slice(2));
  const program = await buildProgram((name) => name === invoked);
  await program.parseAsync();
} catch (err) {
  printError(err instanceof GeohookError ? err.message : `unexpected error: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
}
