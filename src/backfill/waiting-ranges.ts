import type { RedisClient } from '../redis/connection.js';
import { aheadKey } from '../redis/keys.js';

/**
 * When the newest of a scope's ranges waiting for their server was delivered (epoch ms, as the accept script
 * recorded it in `ahead`: `from\tto\turl\tsource\tseen\tdigest` lines), or undefined when none waits.
 */
export async function newestWaitingRange(connection: RedisClient, prefix: string, scope: string): Promise<number | undefined> {
  const lines = await connection.hget(aheadKey(prefix), scope);
  if (lines === null) return undefined;
  let newest: number | undefined;
  for (const line of lines.split('\n')) {
    const seen = Number(line.split('\t')[4]);
    if (Number.isFinite(seen) && (newest === undefined || seen > newest)) newest = seen;
  }
  return newest;
}
