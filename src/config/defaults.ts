import type { RetryPolicy } from './retry-policy.js';

/** Seconds in a day: the default of every 24 h window. */
const DAY_SECONDS = 86_400;

/** How long an event id is remembered per hook. */
export const DEFAULT_DEDUP_RETENTION_SECONDS = DAY_SECONDS;

/** Completed jobs kept for inspection and replay. */
export const defaultCompletedJobs: { readonly ageSeconds: number; readonly count: number } = Object.freeze({
  ageSeconds: DAY_SECONDS,
  count: 10_000,
});

/** How consumers retry an event: 5 attempts, exponential backoff from 1 s with 20 % jitter. */
export const defaultRetryPolicy: RetryPolicy = Object.freeze({
  attempts: 5,
  backoff: Object.freeze({ type: 'exponential', delayMs: 1000, jitter: 0.2 }),
});

/** The key prefix of everything geohook keeps in Redis, BullMQ's queues included (`GEOHOOK_PREFIX`). */
export const DEFAULT_PREFIX = 'geohook';

/**
 * How far behind the acknowledgements the fan-out may fall while it yields to them (`eventLog.maxLagSeconds`): a burst
 * that saturates the receiver for less than this is acknowledged at the receiver's full rate.
 */
export const DEFAULT_FANOUT_MAX_LAG_SECONDS = 30;
