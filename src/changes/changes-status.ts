import type { Queue } from 'bullmq';
import { parseScope } from '../events/tracked-ranges.js';
import type { RedisClient } from '../redis/connection.js';
import {
  changesFailedKey,
  changesPendingKey,
  changesPreviousKey,
  changesResolvedKey,
  serverGensKey,
  watermarksKey,
} from '../redis/keys.js';
import { openChangeQueues } from './change-queues.js';
import type { FailedRange } from './failed-ranges.js';

/** Where one scope stands: the service on ArcGIS Enterprise, each layer on Online. */
export interface ChangesScopeStatus {
  scope: string;
  /** The layer of an ArcGIS Online scope. */
  layerId?: number;
  /** The generation resolved to (a range being resolved counts from when it is claimed). */
  resolvedGen: number;
  /** Its watermark: what is handed over, and to be resolved. */
  watermark: number | undefined;
  /** Its server's generation as the server last reported it, when known. */
  serverGen: number | undefined;
  /** The range being resolved, if one is. */
  pending?: [number, number];
  /** When the range being resolved was claimed (ISO 8601). */
  pendingSince?: string;
  /** Its jobs on the `change-ranges` queue not finished yet: waiting, delayed or active (replays included). */
  jobs: number;
  /** The last range that failed for good. */
  lastError?: FailedRange;
}

/** Where change events of one service stand (`geohook changes status`). */
export interface ChangesServiceStatus {
  service: string;
  hook: string;
  scopes: ChangesScopeStatus[];
  /** Features whose previous values are kept. */
  previousValues: number;
}

/** Change events' queues, and where each followed service stands. */
export interface ChangesStatus {
  /** Jobs per state of the `change-events` queue. */
  queue: Record<string, number>;
  /** Jobs per state of the `change-ranges` queue (the ranges to resolve). */
  ranges: Record<string, number>;
  services: ChangesServiceStatus[];
}

/** The unfinished jobs of the `change-ranges` queue read for their scope: one per scope at a time, and replays. */
const IN_FLIGHT_READ = 1000;

const COUNTED = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;

/** The unfinished `change-ranges` jobs of each scope. */
async function jobsByScope(queue: Queue): Promise<Map<string, number>> {
  const jobs = await queue.getJobs(['active', 'waiting', 'delayed', 'prioritized'], 0, IN_FLIGHT_READ - 1);
  const counts = new Map<string, number>();
  for (const job of jobs) {
    // A job removed while it was listed is undefined; one planted by another producer may hold anything.
    const scope: unknown = (job as { data?: { scope?: unknown } } | undefined)?.data?.scope;
    if (typeof scope === 'string') counts.set(scope, (counts.get(scope) ?? 0) + 1);
  }
  return counts;
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

/** A failed range as recorded (`recordFailedRange`), its fields made what they say whatever else wrote it. */
function parseFailedRange(value: string): FailedRange {
  let recorded: Partial<Record<keyof FailedRange, unknown>> = {};
  try {
    recorded = (JSON.parse(value) ?? {}) as typeof recorded;
  } catch {
    return { from: NaN, to: NaN, error: `unreadable record: ${value}`, at: '' };
  }
  const { from, to, error, at } = recorded;
  return { from: Number(from), to: Number(to), error: String(error), at: String(at) };
}

/**
 * Reads where change events stand (`geohook changes status`, the dashboard's changes view): per followed service, its
 * scopes' resolved, watermark and server generations, pending range, jobs in flight and last failure.
 */
export async function readChangesStatus(redis: RedisClient, prefix: string): Promise<ChangesStatus> {
  const [resolved, pending, failed] = await Promise.all([
    redis.hgetall(changesResolvedKey(prefix)),
    redis.hgetall(changesPendingKey(prefix)),
    redis.hgetall(changesFailedKey(prefix)),
  ]);
  const scopes = Object.keys(resolved).sort();
  const [marks, serverGens] =
    scopes.length === 0
      ? [[], []]
      : await Promise.all([redis.hmget(watermarksKey(prefix), ...scopes), redis.hmget(serverGensKey(prefix), ...scopes)]);
  const queues = openChangeQueues(redis, prefix);
  const { events, ranges } = queues;
  try {
    const [queueCounts, rangeCounts, inFlight] = await Promise.all([
      events.getJobCounts(...COUNTED),
      ranges.getJobCounts(...COUNTED),
      jobsByScope(ranges),
    ]);
    const byService = new Map<string, ChangesServiceStatus>();
    for (const [index, scope] of scopes.entries()) {
      const hook = scope.slice(0, scope.indexOf(' '));
      const { service, layerId } = parseScope(scope);
      const key = `${hook} ${service}`;
      let entry = byService.get(key);
      if (entry === undefined) {
        entry = { service, hook, scopes: [], previousValues: await previousValuesOf(redis, prefix, key) };
        byService.set(key, entry);
      }
      const mark = marks[index];
      const serverGen = serverGens[index]?.split('\t')[0];
      const status: ChangesScopeStatus = {
        scope,
        ...(layerId === undefined ? {} : { layerId }),
        resolvedGen: Number(resolved[scope]),
        watermark: mark == null ? undefined : Number(mark),
        serverGen: serverGen === undefined ? undefined : Number(serverGen),
        jobs: inFlight.get(scope) ?? 0,
      };
      const claimed = pending[scope]?.split('\t');
      if (claimed !== undefined) {
        status.pending = [Number(claimed[0]), Number(claimed[1])];
        const at = Number(claimed[2]);
        if (Number.isFinite(at) && at > 0) status.pendingSince = new Date(at).toISOString();
      }
      if (failed[scope] !== undefined) status.lastError = parseFailedRange(failed[scope]);
      entry.scopes.push(status);
    }
    return { queue: queueCounts, ranges: rangeCounts, services: [...byService.values()] };
  } finally {
    await queues.close();
  }
}
