import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, type JobType } from 'bullmq';
import { Redis } from 'ioredis';
import { allQueueNames } from '../../src/queue/names.js';

/** Every state a BullMQ job can be in: a job in none of them is invisible to consumers. */
export const allStates: JobType[] = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'];

/** A job found in one of the three queues. */
export interface StoredJob {
  queue: string;
  jobId: string;
  /** The envelope's `id`: SHA-256 hex of the body. */
  eventId: string | undefined;
  /** The exact bytes the stored event holds (its `body`, decoded). */
  rawBody: Buffer | undefined;
}

/** What was left to move when the wait ended. */
export interface MoveState {
  /** True once the spool was empty twice in a row. */
  drained: boolean;
  spoolFiles: number;
  waitedMs: number;
}

function spoolFiles(spoolDir: string | undefined): number {
  if (spoolDir === undefined) return 0;
  try {
    return readdirSync(spoolDir).filter((name) => name.endsWith('.jsonl')).length;
  } catch {
    return 0;
  }
}

/**
 * Waits until every acknowledged event is a job: no spool file is left, twice in a row 250 ms apart (an
 * event is a job when it is acknowledged, unless it was spooled). A receiver must be running: it drains
 * the spool.
 */
export async function waitUntilMoved(spoolDir?: string, timeoutMs = 60_000): Promise<MoveState> {
  const startedAtMs = Date.now();
  let emptyPolls = 0;
  for (;;) {
    const files = spoolFiles(spoolDir);
    emptyPolls = files === 0 ? emptyPolls + 1 : 0;
    const waitedMs = Date.now() - startedAtMs;
    if (emptyPolls >= 2) return { drained: true, spoolFiles: files, waitedMs };
    if (waitedMs > timeoutMs) return { drained: false, spoolFiles: files, waitedMs };
    await sleep(250);
  }
}

/** Every job of the three queues under `prefix`, in any state, through BullMQ (as a consumer sees them). */
export async function readStoredJobs(redisUrl: string, prefix: string): Promise<StoredJob[]> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  try {
    const perQueue = await Promise.all(
      allQueueNames.map(async (name) => {
        const queue = new Queue(name, { connection, prefix });
        try {
          const jobs = await queue.getJobs(allStates, 0, -1);
          return jobs.map((job): StoredJob => {
            const data = (job.data ?? {}) as { id?: unknown; body?: unknown; bodyEncoding?: unknown };
            const encoding = data.bodyEncoding === 'utf8' || data.bodyEncoding === 'base64' ? data.bodyEncoding : undefined;
            return {
              queue: name,
              jobId: job.id ?? '',
              eventId: typeof data.id === 'string' ? data.id : undefined,
              rawBody: typeof data.body === 'string' && encoding !== undefined ? Buffer.from(data.body, encoding) : undefined,
            };
          });
        } finally {
          await queue.close();
        }
      }),
    );
    // A job is listed once per state set it is in; it is one job.
    const byKey = new Map(perQueue.flat().map((job) => [`${job.queue}:${job.jobId}`, job]));
    return [...byKey.values()];
  } finally {
    await connection.quit().catch(() => connection.disconnect());
  }
}

/** How many jobs carry each event id. */
export function countByEventId(jobs: readonly StoredJob[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const job of jobs) if (job.eventId !== undefined) counts.set(job.eventId, (counts.get(job.eventId) ?? 0) + 1);
  return counts;
}

/** What the audit of one scenario found. */
export interface Verdict {
  sent: number;
  acknowledged: number;
  /** Deliveries (of those sent) with at least one job. */
  found: number;
  /** Acknowledged deliveries with no job. */
  lost: number;
  /** Deliveries with more than one job. */
  duplicated: number;
  /** Deliveries stored although never acknowledged (a retry would be answered `duplicate: true`). */
  storedUnacknowledged: number;
  /** Jobs whose event id is no delivery's. */
  strangers: number;
}

/**
 * Compares what the sender was promised with what Redis holds: `deliveries` are the event ids sent, each
 * with whether it got a 2xx.
 */
export function judge(deliveries: readonly { eventId: string; acknowledged: boolean }[], jobs: readonly StoredJob[]): Verdict {
  const counts = countByEventId(jobs);
  const sentIds = new Set(deliveries.map((delivery) => delivery.eventId));
  const verdict: Verdict = {
    sent: deliveries.length,
    acknowledged: 0,
    found: 0,
    lost: 0,
    duplicated: 0,
    storedUnacknowledged: 0,
    strangers: 0,
  };
  for (const { eventId, acknowledged } of deliveries) {
    const stored = counts.get(eventId) ?? 0;
    if (acknowledged) verdict.acknowledged += 1;
    if (stored > 0) verdict.found += 1;
    if (stored > 1) verdict.duplicated += 1;
    if (acknowledged && stored === 0) verdict.lost += 1;
    if (!acknowledged && stored > 0) verdict.storedUnacknowledged += 1;
  }
  verdict.strangers = jobs.filter((job) => job.eventId === undefined || !sentIds.has(job.eventId)).length;
  return verdict;
}
