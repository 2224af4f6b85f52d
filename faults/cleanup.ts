import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What the fault suite must undo however it ends: async tasks (kill a receiver, stop a redis-server) run on
 * Ctrl-C/SIGTERM and after a fatal error, newest first; temporary directories are removed on exit unless
 * kept (a scenario that broke a promise keeps its logs).
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

/** A fresh temporary directory, removed at exit unless {@link keepTempDir} is called. */
export function makeTempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `geohook-faults-${label}-`));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Leaves `dir` on disk after the run (its logs explain a broken promise). */
export function keepTempDir(dir: string): void {
  tempDirs.delete(dir);
}

/** On SIGINT/SIGTERM: clean up, then exit with the conventional code. */
export function exitCleanlyOnSignals(log: (line: string) => void): void {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping every receiver and redis-server`);
      void cleanUp().finally(() => process.exit(code));
    });
  }
}
