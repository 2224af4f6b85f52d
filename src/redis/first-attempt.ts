import { isAuthRefusal, redisAuthError } from './auth-refusal.js';
import type { RedisClient } from './connection.js';

/** How long a first attempt may say nothing: a Sentinel, a Cluster or a server loading its data may not, for a while. */
const FIRST_ATTEMPT_TIMEOUT_MS = 3000;

/**
 * Waits for the first attempt of `connection` to reach Redis to end, `timeoutMs` at most: rejects with
 * `GEOHOOK_ERR_REDIS_AUTH` when Redis refused the password (no retry mends it); resolves when it answered, when it
 * could not be reached (refused, timed out: it may come later), or when it said nothing yet. Listens from the call:
 * call it as soon as the connection is made.
 */
export function firstAttempt(connection: RedisClient, timeoutMs = FIRST_ATTEMPT_TIMEOUT_MS): Promise<void> {
  if (connection.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (err?: Error): void => {
      clearTimeout(timer);
      connection.off('ready', settle).off('error', settle);
      if (err !== undefined && isAuthRefusal(err)) reject(redisAuthError(connection, err));
      else resolve();
    };
    const timer = setTimeout(settle, timeoutMs);
    connection.once('ready', settle).once('error', settle);
  });
}

/** Calls `start` once `connection` is ready: now, or when it first is. Returns what cancels a call still to come. */
export function onceReady(connection: RedisClient, start: () => void): () => void {
  if (connection.status === 'ready') {
    start();
    return () => undefined;
  }
  connection.once('ready', start);
  return () => connection.off('ready', start);
}
