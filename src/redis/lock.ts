import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GeohookError } from '../errors.js';
import type { RedisClient } from './connection.js';

/** Options of {@link withLock}. */
export interface LockOptions {
  /** How long the lock lives if its owner dies without releasing it. @defaultValue 120000 */
  ttlMs?: number;
  /** How long to wait for a lock another owner holds before giving up. @defaultValue 130000 */
  waitMs?: number;
  /** Pause between two attempts to take a held lock. @defaultValue 100 */
  pollMs?: number;
}

/** Deletes the lock only when it still holds our token: an expired lock taken over by another is left alone. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Runs `fn` while holding the Redis lock `key` (`SET key token NX PX ttl`), waiting for it while another
 * owner holds it. Throws `GEOHOOK_ERR_REGISTRATION` when the lock stays busy longer than `waitMs`.
 */
export async function withLock<T>(redis: RedisClient, key: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const ttlMs = options.ttlMs ?? 120_000;
  const waitMs = options.waitMs ?? ttlMs + 10_000;
  const pollMs = options.pollMs ?? 100;
  const token = randomUUID();
  const deadline = Date.now() + waitMs;
  while ((await redis.set(key, token, 'PX', ttlMs, 'NX')) !== 'OK') {
    if (Date.now() >= deadline) throw new GeohookError('GEOHOOK_ERR_REGISTRATION', `the lock ${key} stayed busy for ${waitMs} ms`);
    await sleep(pollMs);
  }
  try {
    return await fn();
  } finally {
    await redis.eval(RELEASE_SCRIPT, 1, key, token).catch(() => undefined);
  }
}
