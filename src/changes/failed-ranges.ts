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
