import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder at or above `dir` that holds a package.json. */
function packageRoot(dir: string): string {
  if (existsSync(join(dir, 'package.json'))) return dir;
  const parent = dirname(dir);
  if (parent === dir) throw new Error('no package.json above the test helpers');
  return packageRoot(parent);
}

/** The repository's root folder. The suite runs compiled, from `dist-test/`, so paths start here rather than at a test file. */
export const repoRoot: string = packageRoot(dirname(fileURLToPath(import.meta.url)));

/** The absolute path of `segments` under the repository's root. */
export function repoPath(...segments: string[]): string {
  return join(repoRoot, ...segments);
}

/** Exact bytes of a file in test/fixtures. */
export function fixture(name: string): Buffer {
  return readFileSync(repoPath('test', 'fixtures', name));
}
