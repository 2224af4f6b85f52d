import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import { LONG_JOB_TRIES } from './long-jobs.js';

/**
 * A confirm job (one per scope at a time, `confirm-<sha1 of scope>`): reads the server's generation for the
 * ranges waiting ahead of it (docs/backfill.md#ranges-the-server-confirms). Tried like a gap while the server
 * does not answer; removed once done, so that the next range ahead makes a new one.
 */
export const confirmJobOptions: JobsOptions = Object.freeze({
  attempts: LONG_JOB_TRIES,
  backoff: { type: 'custom' },
  removeOnComplete: true,
  removeOnFail: true,
});

/** The id of a scope's confirm job, as the accept script names it (`confirm-<sha1 of scope>`). */
export const confirmJobId = (scope: string): string => `confirm-${createHash('sha1').update(scope).digest('hex')}`;
