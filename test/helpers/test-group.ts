import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { repoPath } from './paths.js';

/** The compiled tests' folder (`dist-test/test`): this file is in its `helpers/`. */
const testRoot = dirname(dirname(fileURLToPath(import.meta.url)));

/** The test files (`*.test.js`) under `dir`, its subfolders included, in the order tap would run them. */
function testFiles(dir: string): string[] {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.test.js'));
  return files.map((name) => join(dir, name)).sort((a, b) => a.localeCompare(b, 'en'));
}

/** tap's time limit for one test file (`timeout` in package.json, in seconds), which a file may change with `t.setTimeout`. */
const fileTimeoutMs = (): number => Number(process.env.TAP_TIMEOUT ?? 30) * 1000;

type Teardown = () => unknown;

/** The folders tap leaves out of its own run (`dist-test/test/@(a|b)/**` in `exclude`), and those with a group file. */
function groupedFolders(): { excluded: string[]; grouped: string[] } {
  const { tap } = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { tap: { exclude: string[] } };
  const excluded = tap.exclude.flatMap((pattern) => /^dist-test\/test\/@\(([^)]*)\)\/\*\*$/.exec(pattern)?.[1]?.split('|') ?? []);
  const grouped = readdirSync(join(testRoot, 'groups')).flatMap((name) => /^(.+)\.test\.js$/.exec(name)?.[1] ?? []);
  return { excluded: excluded.sort(), grouped: grouped.sort() };
}

/**
 * Runs every test file under `folders` (of `test/`) in this one process, one file after another, each as if tap had
 * started it: within its own time limit, its tests one at a time, its teardowns (its Redis, its PostgreSQL) run once
 * its tests are done. Every process tap starts pays about a CPU-second for tap's process-info and coverage hooks, and
 * loads geohook, Fastify, BullMQ and ioredis again. tap leaves these folders out (`exclude` in package.json); a file
 * still runs alone as before (`npx tap dist-test/test/receiver/accept.test.js`).
 *
 * Each file is imported in a subtest named after it, which then queues the next file's: the file's own tests, queued on
 * the root test as it was imported, all run before the next file's subtest. The teardowns a file gives the root test
 * while it is imported are kept aside and run by the next file's subtest (the last file's, when the group ends).
 */
export function runTestGroup(...folders: string[]): void {
  const files = folders.flatMap((folder) => testFiles(join(testRoot, folder)));
  let teardowns: Teardown[] = [];
  const tearDown = async (): Promise<void> => {
    const due = teardowns;
    teardowns = [];
    // Last given, first run, as tap runs them.
    for (const teardown of due.reverse()) await teardown();
  };
  t.teardown(tearDown);
  const { excluded, grouped } = groupedFolders();
  // A folder left out without a group would never run; one grouped and not left out would run twice.
  t.same(excluded, grouped, 'tap leaves out exactly the folders that run as groups');
  const next = (index: number): void => {
    const file = files[index];
    if (file === undefined) return;
    void t.test(relative(testRoot, file), async (sub) => {
      const { teardown, after } = t;
      try {
        await tearDown();
        t.setTimeout(fileTimeoutMs());
        // A file may have run its tests side by side (`t.jobs`): the next file's run one at a time again.
        t.jobs = 1;
        t.teardown = t.after = (fn: Teardown) => void teardowns.push(fn);
        await import(pathToFileURL(file).href);
        sub.pass('loaded');
      } finally {
        Object.assign(t, { teardown, after });
        next(index + 1);
      }
    });
  };
  next(0);
}
