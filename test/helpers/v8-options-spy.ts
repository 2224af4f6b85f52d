import { syncBuiltinESMExports } from 'node:module';
import v8 from 'node:v8';

/**
 * Loaded with `node --import` before a script: each V8 option the script sets on itself with `setFlagsFromString` is
 * written to stderr (`v8 option: …`), then set. A test reads what a process did to its own V8.
 */
const setFlags = v8.setFlagsFromString.bind(v8);
v8.setFlagsFromString = (flags: string): void => {
  process.stderr.write(`v8 option: ${flags}\n`);
  setFlags(flags);
};
// The script's `import { setFlagsFromString } from 'node:v8'` sees the spy too.
syncBuiltinESMExports();
