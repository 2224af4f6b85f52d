import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';

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

/**
 * The URL of the embedded redis-server of the `geohook up` running in the working directory (`dir` resolved against
 * it); a {@link ConfigError} when none runs there.
 */
export function runningUpRedisUrl(dir = EMBEDDED_REDIS_DIR): string {
  const url = readRecordedRedisUrl(resolve(dir));
  if (url === undefined) {
    throw new ConfigError(
      `REDIS_URL: not set, and no \`geohook up\` is running in this directory (it records its Redis in ${EMBEDDED_REDIS_DIR}/url)`,
    );
  }
  return url;
}
