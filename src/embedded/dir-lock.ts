import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GeohookError } from '../errors.js';
import { isRunning } from './redis-server.js';

const LOCK_FILE = 'owner.pid';

/** The pid of the running process that holds `dir`, if one does (a lock left by a dead one is no hold). */
function holderOf(path: string): number | undefined {
  let owner: number;
  try {
    owner = Number(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
  return Number.isInteger(owner) && owner > 0 && isRunning(owner) ? owner : undefined;
}

const heldError = (dir: string, path: string, owner: number): GeohookError =>
  new GeohookError(
    'GEOHOOK_ERR_REDIS_SERVER',
    `another geohook (pid ${owner}) runs the embedded Redis of ${dir}: stop it, run from another directory, or set REDIS_URL (remove ${path} if pid ${owner} is not geohook)`,
  );

/**
 * Throws as {@link lockDataDir} would when another running process holds `dir`: for a start that does more
 * (the emulator of `geohook up`) before it takes the lock.
 */
export function assertDataDirFree(dir: string): void {
  const path = join(dir, LOCK_FILE);
  const owner = holderOf(path);
  if (owner !== undefined) throw heldError(dir, path, owner);
}

/**
 * Makes this process the only user of the embedded Redis data directory `dir`: two redis-servers appending
 * to one AOF would corrupt it. A lock left by a process that died is taken over. Returns the release.
 * Throws `GEOHOOK_ERR_REDIS_SERVER` naming the process that holds it.
 */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      writeFileSync(path, `${process.pid}\n`, { flag: 'wx' });
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = holderOf(path);
    if (owner !== undefined) throw heldError(dir, path, owner);
    rmSync(path, { force: true }); // its owner died without releasing it
  }
  throw new GeohookError('GEOHOOK_ERR_REDIS_SERVER', `cannot lock ${dir}: it keeps changing hands`);
}
