import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where `geohook up` keeps the data of its embedded redis-server, relative to the working directory. */
export const EMBEDDED_REDIS_DIR = '.geohook/redis';

const URL_FILE = 'url';

/**
 * Records the URL of a running embedded redis-server in its data directory, so that `geohook consume` and
 * `geohook events` started in the same directory find it without REDIS_URL. The URL carries the server's
 * password: the file is readable by its owner only (mode 0600), written whole before it replaces the last one.
 */
export function recordRedisUrl(dir: string, url: string): void {
  const next = join(dir, `${URL_FILE}.next`);
  rmSync(next, { force: true }); // a file left by a crash keeps its mode when written again
  writeFileSync(next, `${url}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(next, join(dir, URL_FILE));
}

/** Removes the record once the embedded redis-server has stopped. */
export function forgetRedisUrl(dir: string): void {
  rmSync(join(dir, URL_FILE), { force: true });
}

/** The URL recorded in `dir`, or `undefined` when no embedded redis-server runs there. */
export function readRecordedRedisUrl(dir: string): string | undefined {
  try {
    const url = readFileSync(join(dir, URL_FILE), 'utf8').trim();
    return url === '' ? undefined : url;
  } catch {
    return undefined;
  }
}
