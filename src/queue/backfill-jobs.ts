import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';

/** Longest wait between two tries of a gap whose `extractChanges` failed. */
export const BACKFILL_MAX_BACKOFF_MS = 60_000;

/** Tries of a gap: about a day at the longest wait. */
const BACKFILL_TRIES = 1500;

/**
 * A gap's job: tried again and again (about a day of tries at the longest wait) with the worker's
 * {@link backfillBackoff}, kept when it fails for good so that the gap stays visible, kept a day once done.
 */
export const backfillJobOptions: JobsOptions = Object.freeze({
  attempts: BACKFILL_TRIES,
  backoff: { type: 'custom' },
  removeOnComplete: { age: 86_400, count: 1000 },
  removeOnFail: false,
});

/**
 * BullMQ's stalled-job limit for gap jobs: a gap whose worker stopped mid-fill (a receiver killed, or closed
 * without waiting) is taken again as often as a failing fill is tried, not failed at the second stop as
 * BullMQ's default (1) would: filling a range twice yields the same event id, giving up would lose its edits.
 */
export const BACKFILL_MAX_STALLED_COUNT = BACKFILL_TRIES;

/**
 * How long a gap stays locked to a worker that stops renewing it (BullMQ renews it every half of this while
 * the worker lives). With {@link BACKFILL_STALLED_CHECK_MS}, a gap whose receiver was killed mid-fill is taken
 * again within about 15 s, not after BullMQ's default 30-s lock and 30-s check.
 */
export const BACKFILL_LOCK_MS = 10_000;

/** How often each backfill worker looks for gaps whose lock lapsed. */
export const BACKFILL_STALLED_CHECK_MS = 5_000;

/** The wait before the next try of a gap, ms: 1 s, doubled each try, at most {@link BACKFILL_MAX_BACKOFF_MS}. */
export function backfillBackoff(attemptsMade: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attemptsMade - 1), BACKFILL_MAX_BACKOFF_MS);
}

/**
 * A confirm job (one per scope at a time, `confirm-<sha1 of scope>`): reads the server's generation for the
 * ranges waiting ahead of it (docs/backfill.md#ranges-the-server-confirms). Tried like a gap while the server
 * does not answer; removed once done, so that the next range ahead makes a new one.
 */
export const confirmJobOptions: JobsOptions = Object.freeze({
  attempts: BACKFILL_TRIES,
  backoff: { type: 'custom' },
  removeOnComplete: true,
  removeOnFail: true,
});

/** The id of a scope's confirm job, as the accept script names it (`confirm-<sha1 of scope>`). */
export const confirmJobId = (scope: string): string => `confirm-${createHash('sha1').update(scope).digest('hex')}`;
