import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What the bench must undo however it ends: async tasks (stop a redis-server, close a child) run on
 * Ctrl-C/SIGTERM and on a fatal error; temporary directories are removed on exit in any case. Children are
 * killed on exit by `ipc.ts`, and each redis-server by `RedisServer` itself.
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

/** A fresh temporary directory, removed by {@link removeTempDir} or at exit. */
export function makeTempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `geohook-bench-${label}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** On SIGINT/SIGTERM: clean up, then exit with the conventional code. */
export function exitCleanlyOnSignals(log: (line: string) => void): void {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping every child and redis-server`);
      void cleanUp().finally(() => process.exit(code));
    });
  }
}
