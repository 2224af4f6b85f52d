import { Queue } from 'bullmq';
import { parseScope } from '../events/tracked-ranges.js';
import type { RedisClient } from '../redis/connection.js';
import { changesFailedKey, changesPendingKey, changesPreviousKey, changesResolvedKey, watermarksKey } from '../redis/keys.js';
import { changeEventsQueueName } from './change-event.js';

/** Where change events of one service stand (`geohook changes status`). */
export interface ChangesServiceStatus {
  service: string;
  hook: string;
  /** Its scopes: the service on ArcGIS Enterprise, each layer on Online. */
  scopes: {
    scope: string;
    /** The generation resolved to. */
    resolvedGen: number;
    /** Its watermark: what is handed over, and to be resolved. */
    watermark: number | undefined;
    /** The range being resolved, if one is. */
    pending?: [number, number];
    /** The last range that failed for good. */
    lastError?: { from: number; to: number; error: string; at: string };
  }[];
  /** Features whose previous values are kept. */
  previousValues: number;
}

/** Change events' queue, and where each followed service stands. */
export interface ChangesStatus {
  queue: Record<string, number>;
  services: ChangesServiceStatus[];
}

async function previousValuesOf(redis: RedisClient, prefix: string, scope: string): Promise<number> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${changesPreviousKey(prefix, scope)}*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  // Each feature is one field, and one more for its GlobalID where it has one: count the features.
  let features = 0;
  for (const key of keys) {
    const fields = await redis.hlen(key);
    let indexed = 0;
    let scan = '0';
    do {
      const [next, found] = await redis.hscan(key, scan, 'MATCH', 'g:*', 'COUNT', 1000);
      scan = next;
      indexed += found.length / 2;
    } while (scan !== '0');
    features += fields - indexed;
  }
  return features;
}

/** Reads where change events stand: per followed service, its scopes' resolved generation, pending range, last failure. */
export async function readChangesStatus(redis: RedisClient, prefix: string): Promise<ChangesStatus> {
  const [resolved, pending, failed] = await Promise.all([
    redis.hgetall(changesResolvedKey(prefix)),
    redis.hgetall(changesPendingKey(prefix)),
    redis.hgetall(changesFailedKey(prefix)),
  ]);
  const scopes = Object.keys(resolved).sort();
  const marks = scopes.length === 0 ? [] : await redis.hmget(watermarksKey(prefix), ...scopes);
  const byService = new Map<string, ChangesServiceStatus>();
  for (const [index, scope] of scopes.entries()) {
    const hook = scope.slice(0, scope.indexOf(' '));
    const { service } = parseScope(scope);
    const key = `${hook} ${service}`;
    let entry = byService.get(key);
    if (entry === undefined) {
      entry = { service, hook, scopes: [], previousValues: await previousValuesOf(redis, prefix, key) };
      byService.set(key, entry);
    }
    const mark = marks[index];
    const status: ChangesServiceStatus['scopes'][number] = {
      scope,
      resolvedGen: Number(resolved[scope]),
      watermark: mark == null ? undefined : Number(mark),
    };
    const claimed = pending[scope]?.split('\t');
    if (claimed !== undefined) status.pending = [Number(claimed[0]), Number(claimed[1])];
    if (failed[scope] !== undefined) status.lastError = JSON.parse(failed[scope]) as NonNullable<typeof status.lastError>;
    entry.scopes.push(status);
  }
  const queue = new Queue(changeEventsQueueName, { connection: redis, prefix });
  try {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed');
    return { queue: counts, services: [...byService.values()] };
  } finally {
    await queue.close();
  }
}
