import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockDataDir } from '../src/embedded/dir-lock.js';
import { RedisServer } from '../src/embedded/redis-server.js';

/** Prefix of every temporary directory a tool makes. */
const TEMP_PREFIX = 'geohook-tool-';
/** Marks a directory kept on purpose (its logs explain a failure): later runs leave it alone. */
const KEPT_MARKER = 'kept';

/**
 * What a tool (`npm run bench`, `npm run test:faults`) must undo however it ends: async tasks (stop a
 * redis-server, kill a child) run on Ctrl-C/SIGTERM and after a fatal error, newest first; temporary
 * directories are removed on exit unless kept. Each redis-server is also stopped by `RedisServer` itself.
 */
const tasks = new Set<() => Promise<void>>();
const tempDirs = new Set<string>();

process.once('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** Registers `task` to run on an abnormal end; returns the function that unregisters it. */
export function onCleanup(task: () => Promise<void>): () => void {
  tasks.add(task);
  return () => tasks.delete(task);
}

/** Runs every registered task (newest first), ignoring their failures. */
export async function cleanUp(): Promise<void> {
  for (const task of [...tasks].reverse()) {
    tasks.delete(task);
    await task().catch(() => undefined);
  }
}

/**
 * A fresh temporary directory `geohook-tool-<label>-…`, marked as this process's, removed by
 * {@link removeTempDir} or at exit (or by the next run, when this one is killed).
 */
export function makeTempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${TEMP_PREFIX}${label}-`));
  lockDataDir(dir);
  tempDirs.add(dir);
  return dir;
}

/**
 * What a run killed with SIGKILL left behind (no handler runs then): for each temporary directory whose
 * owner is gone, the redis-servers still running in it (the directory or a `redis/` inside) are shut down
 * and the directory is removed. Directories of a run still going are left alone.
 */
export async function reapLeftovers(log: (line: string) => void): Promise<void> {
  for (const name of readdirSync(tmpdir()).filter((entry) => entry.startsWith(TEMP_PREFIX))) {
    const dir = join(tmpdir(), name);
    if (existsSync(join(dir, KEPT_MARKER))) continue;
    try {
      lockDataDir(dir);
    } catch {
      continue; // its run is still going
    }
    for (const redisDir of [dir, join(dir, 'redis')]) {
      if (await RedisServer.stopLeftover(redisDir)) log(`stopped a redis-server a killed run left in ${redisDir}`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Leaves `dir` on disk after the run (its logs explain a failure). */
export function keepTempDir(dir: string): void {
  tempDirs.delete(dir);
  writeFileSync(join(dir, KEPT_MARKER), '');
}

/** On SIGINT/SIGTERM: clean up, then exit with the conventional code. */
function exitCleanlyOnSignals(log: (line: string) => void): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping every child and redis-server`);
      void cleanUp().finally(() => process.exit(code));
    });
  }
}

/**
 * The start of a tool's `main`: its options from the command line, or the exit code when it must not run
 * (`--help`: 0 after the usage on stdout; a bad option: 2 after the message and the usage on stderr). When
 * it runs, Ctrl-C and SIGTERM clean up first, and what a killed earlier run left is cleaned up now.
 */
export async function startTool<T>(
  parse: (argv: string[]) => T | undefined,
  usage: string,
  log: (line: string) => void,
): Promise<T | number> {
  let options: T | undefined;
  try {
    options = parse(process.argv.slice(2));
  } catch (err) {
    log((err as Error).message);
    process.stderr.write(`${usage}\n`);
    return 2;
  }
  if (options === undefined) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  exitCleanlyOnSignals(log);
  await reapLeftovers(log);
  return options;
}
