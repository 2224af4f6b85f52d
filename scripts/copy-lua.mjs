// Copies the Lua scripts of src/ beside the JavaScript compiled from it (tsc copies only what it compiles).
// Usage: node scripts/copy-lua.mjs <the directory src/ is compiled into: dist, dist-test/src or dist-harness/src>
import { cpSync, statSync } from 'node:fs';

const [into] = process.argv.slice(2);
if (into === undefined) {
  console.error('usage: node scripts/copy-lua.mjs <the directory src/ is compiled into>');
  process.exit(2);
}
cpSync('src', into, { recursive: true, filter: (path) => statSync(path).isDirectory() || path.endsWith('.lua') });
