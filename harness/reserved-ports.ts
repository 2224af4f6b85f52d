import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { findFreePort, isRunning } from '../src/embedded/redis-server.js';

/**
 * One file per port a tool holds, named after the port, holding the process id of the tool; one directory per
 * user (not `geohook-tool-…`, which the next run removes when no live process owns it).
 */
const RESERVATIONS_DIR = join(tmpdir(), `geohook-ports-${userInfo().uid}`);
/** Picks tried before giving up. */
const PICKS = 20;

const reservations = new Set<string>();
process.once('exit', () => {
  for (const file of reservations) rmSync(file, { force: true });
});

/** The process id a reservation file holds; undefined while its writer has not written it yet. */
function ownerOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes `port` this process's until it exits, unless a running process (this one included) holds it already
 * (what a dead one held is taken over); whether it was made so.
 */
export function holdPort(port: number): boolean {
  mkdirSync(RESERVATIONS_DIR, { recursive: true, mode: 0o700 });
  const file = join(RESERVATIONS_DIR, String(port));
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      reservations.add(file);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = ownerOf(file);
    if (owner === undefined || isRunning(owner)) return false;
    rmSync(file, { force: true });
  }
  return false;
}

/**
 * A free port ({@link findFreePort}) that stays this process's until it exits: no other tool process takes it
 * from this one (a fault row, a bench) while what listens on it is down, e.g. a receiver killed and started
 * again on the same port. Processes that call `findFreePort` directly know nothing of it.
 */
export async function reservePort(): Promise<number> {
  for (let pick = 0; pick < PICKS; pick += 1) {
    const port = await findFreePort();
    if (holdPort(port)) return port;
  }
  throw new Error(`no free port that no other tool process holds after ${PICKS} picks`);
}
