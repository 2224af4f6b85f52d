import { readFileSync } from 'node:fs';
import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/connection.js';
import { changesFailedKey } from '../redis/keys.js';

/** A range of server generations `(from, to]` that failed for good: why, and when (ISO 8601). */
export interface FailedRange {
  from: number;
  to: number;
  error: string;
  at: string;
}

/**
 * Records `range` as the last failed range of `scope` in `<prefix>:changes:failed`, where `geohook changes status`
 * and the dashboard's changes view read it.
 */
export async function recordFailedRange(redis: RedisClient, prefix: string, scope: string, range: FailedRange): Promise<void> {
  await redis.hset(changesFailedKey(prefix), scope, JSON.stringify(range));
}

declare module 'ioredis' {
  interface RedisCommander<Context> {
    geohookClearFailedRange(key: string, scope: string, from: string, to: string): Result<number, Context>;
  }
}

/** Deletes the scope's failed range when `(from, to]` covers it; 1 when it did (`clear-failed-range.lua`, beside this module). */
const clearLua = readFileSync(new URL('./clear-failed-range.lua', import.meta.url), 'utf8');

/**
 * Forgets the failed range of `scope` once `(from, to]`, which covers it, was resolved (a replay): `changes status`
 * and the dashboard then no longer list it. A range that failed since, outside it, stays.
 */
export async function clearFailedRange(
  redis: RedisClient,
  prefix: string,
  scope: string,
  range: { from: number; to: number },
): Promise<boolean> {
  if (typeof redis.geohookClearFailedRange !== 'function')
    redis.defineCommand('geohookClearFailedRange', { numberOfKeys: 1, lua: clearLua });
  return (await redis.geohookClearFailedRange(changesFailedKey(prefix), scope, String(range.from), String(range.to))) === 1;
}
