import type { JobsOptions, WorkerOptions } from 'bullmq';

/** Longest wait between two tries of a long job that failed (a gap's `extractChanges`, a range's resolution). */
export const LONG_JOB_MAX_BACKOFF_MS = 60_000;

/** Tries of a long job: about a day at the longest wait. */
export const LONG_JOB_TRIES = 1500;

/** The wait before the next try of a long job, ms: 1 s, doubled each try, at most {@link LONG_JOB_MAX_BACKOFF_MS}. */
export function longJobBackoff(attemptsMade: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attemptsMade - 1), LONG_JOB_MAX_BACKOFF_MS);
}

/**
 * The options of a long job, a backfill's gap or a change events' range: tried again and again (about a day of
 * tries at the longest wait) with the worker's {@link longJobBackoff}, kept when it fails for good so that it stays
 * visible, kept a day once done.
 */
export const longJobOptions: JobsOptions = Object.freeze({
  attempts: LONG_JOB_TRIES,
  backoff: { type: 'custom' },
  removeOnComplete: { age: 86_400, count: 1000 },
  removeOnFail: false,
});

/**
 * The `Worker` settings of long jobs (the backfill's, change events' resolver's):
 * - `maxStalledCount`: a job whose worker stopped midway (a receiver killed, or closed without waiting) is taken
 *   again as often as a failing job is tried, not failed at the second stop as BullMQ's default (1) would: doing it
 *   twice yields the same event ids, giving up would lose its edits.
 * - `lockDuration` and `stalledInterval`: a job stays locked 10 s to a worker that stops renewing it (BullMQ renews
 *   it every half of this while the worker lives), and each worker looks every 5 s for jobs whose lock lapsed, so a
 *   job whose receiver was killed is taken again within about 15 s, not after BullMQ's default 30-s lock and 30-s
 *   check.
 * - the backoff of the jobs' `custom` type, {@link longJobBackoff}.
 */
export const longJobWorkerOptions = Object.freeze({
  maxStalledCount: LONG_JOB_TRIES,
  lockDuration: 10_000,
  stalledInterval: 5_000,
  settings: Object.freeze({ backoffStrategy: longJobBackoff }),
}) satisfies Partial<WorkerOptions>;
