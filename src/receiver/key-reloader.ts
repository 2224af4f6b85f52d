import type { FastifyBaseLogger } from 'fastify';
import type { RedisClient } from '../redis/connection.js';
import type { HookKeys } from '../signature/hook-keys.js';

/**
 * Reloads the generated signature keys of `hookKeys` from Redis every `intervalMs`, so that a key added or
 * dropped by a rotation (`geohook admin rotate-key`) on any replica verifies, or stops verifying, here
 * within one interval. A failed reload keeps the last keys and is logged at debug (the connection logs
 * outages). Returns a function that stops the timer.
 */
export function startKeyReload(hookKeys: HookKeys, redis: RedisClient, intervalMs: number, log: FastifyBaseLogger): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    hookKeys
      .load(redis, Math.max(intervalMs, 1000))
      .catch((err: unknown) => log.debug({ err }, 'generated signature keys not reloaded from Redis'))
      .finally(() => (busy = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
