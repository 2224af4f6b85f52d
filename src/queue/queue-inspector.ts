import type { Job, RetryOptions } from 'bullmq';
import { defaultCompletedJobs } from '../config/defaults.js';
import { GeohookError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { listFailedJobs, type FailedJobsPage } from './failed-jobs.js';
import { eventJobRef, findEventJob, type EventJobRef, type FoundJob, type QueueSource } from './find-event-job.js';
import { allQueueNames, type QueueName } from './names.js';
import { openQueue } from './open-queue.js';
import { markReplayed } from './replay-mark.js';

/** The job states counted per queue, as BullMQ names them. */
export const jobStates = ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children'] as const;

export type JobStateName = (typeof jobStates)[number];

/** Jobs of one queue by state. */
export type JobCounts = Record<JobStateName, number>;

/**
 * Jobs per state of each queue named (any BullMQ queue under `prefix`: a relay route's, a subscription's…), in the
 * order given: one Redis round trip per queue. A queue nothing was ever written to counts zero everywhere.
 */
export async function countJobs(connection: RedisClient, prefix: string, names: readonly string[]): Promise<Record<string, JobCounts>> {
  const queues = names.map((name) => openQueue(name, { connection, prefix, skipWaitingForReady: true }));
  try {
    const counts = await Promise.all(queues.map(async (queue) => (await queue.getJobCounts(...jobStates)) as JobCounts));
    return Object.fromEntries(names.map((name, index) => [name, counts[index]!]));
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
  }
}

/** A job put back to be consumed again, and the state it came from. */
export interface RetriedJob extends EventJobRef {
  from: 'failed' | 'completed';
}

/** Options of {@link QueueInspector}. */
export interface QueueInspectorOptions {
  /** The queues, e.g. an `EventQueue` (its queues exist once Redis was first reached). */
  queues: QueueSource;
  /** The names of the queues it reads and repairs, e.g. a subscription's `sub-<name>`. @defaultValue the three family queues */
  names?: readonly string[];
  /** How long completed jobs are kept (`completedJobs.ageSeconds`), named when an event is not found. @defaultValue 86400 */
  completedJobsAgeSeconds?: number;
}

/** Which queue of the inspector's a call is about; all of them when absent. */
export interface QueueChoice {
  queue?: string | undefined;
}

/** Ids fetched and retried at a time by {@link QueueInspector.retryAll}. */
const RETRY_BATCH = 100;

/** A retried job gets its whole retry policy again. */
const fresh: RetryOptions = { resetAttemptsMade: true, resetAttemptsStarted: true };

/**
 * Reads and repairs the geohook queues: job counts, dead letters (the failed set), retries and replays.
 * A retry or replay keeps the job id and data, so consumers see the same event again; the receiver's
 * deduplication of repeated deliveries is not involved.
 */
export class QueueInspector {
  private readonly source: QueueSource;
  private readonly names: readonly string[];
  private readonly completedJobsAgeSeconds: number;

  constructor(options: QueueInspectorOptions) {
    this.source = options.queues;
    this.names = options.names ?? allQueueNames;
    this.completedJobsAgeSeconds = options.completedJobsAgeSeconds ?? defaultCompletedJobs.ageSeconds;
  }

  /** Jobs per queue and state: one Redis round trip per queue. */
  async counts(): Promise<Record<QueueName, JobCounts>> {
    const entries = await Promise.all(
      allQueueNames.map(async (name) => [name, (await this.source.queue(name).getJobCounts(...jobStates)) as JobCounts] as const),
    );
    return Object.fromEntries(entries) as Record<QueueName, JobCounts>;
  }

  /** Dead letters, newest first, of one queue or all of the inspector's. */
  failed(query: QueueChoice & { limit?: number | undefined; offset?: number | undefined } = {}): Promise<FailedJobsPage> {
    return listFailedJobs(this.source, { queues: this.chosen(query), limit: query.limit, offset: query.offset });
  }

  /**
   * Puts failed jobs back to be consumed again, each with its whole retry policy. Every id is checked
   * first: when one has no failed job ({@link GeohookError} `GEOHOOK_ERR_EVENT_NOT_FOUND`), none is retried.
   */
  async retry(ids: readonly string[], options: QueueChoice = {}): Promise<RetriedJob[]> {
    const names = this.chosen(options);
    const found: FoundJob[] = [];
    for (const id of new Set(ids)) {
      const hit = await findEventJob(this.source, id, names);
      if (hit === undefined) throw this.notFound(id, names);
      if (hit.state !== 'failed')
        throw new GeohookError('GEOHOOK_ERR_EVENT_NOT_FOUND', `${id}: not failed (it is ${hit.state} in ${hit.queue}); nothing retried`);
      found.push(hit);
    }
    return Promise.all(found.map((hit) => this.requeue(hit.queue, hit.job, 'failed')));
  }

  /** Puts every failed job (of one queue, or all of the inspector's) back to be consumed again. */
  async retryAll(options: QueueChoice = {}): Promise<RetriedJob[]> {
    const retried: RetriedJob[] = [];
    for (const name of this.chosen(options)) {
      const queue = this.source.queue(name);
      // The ids are read once: a job that fails again while this runs is not retried twice.
      const ids = await queue.getRanges(['failed'], 0, -1, true);
      for (let start = 0; start < ids.length; start += RETRY_BATCH) {
        const jobs = (await Promise.all(ids.slice(start, start + RETRY_BATCH).map((id) => queue.getJob(id)))) as (Job | undefined)[];
        const batch = await Promise.all(jobs.map((job) => (job === undefined ? undefined : this.requeueIfFailed(name, job))));
        retried.push(...batch.filter((job) => job !== undefined));
      }
    }
    return retried;
  }

  /** Retries `job` unless it left the failed set meanwhile (retried or removed by someone else). */
  private async requeueIfFailed(queue: string, job: Job): Promise<RetriedJob | undefined> {
    try {
      return await this.requeue(queue, job, 'failed');
    } catch (err) {
      if ((await job.getState()) !== 'failed') return undefined;
      throw err;
    }
  }

  /**
   * Consumes an event again, by event id (or job id): a completed job is replayed from the start, a failed
   * one retried. A pending event (waiting, active, delayed…) or one not found throws
   * `GEOHOOK_ERR_EVENT_NOT_FOUND`.
   */
  async replay(id: string): Promise<RetriedJob> {
    const hit = await findEventJob(this.source, id, this.names);
    if (hit === undefined) throw this.notFound(id, this.names);
    if (hit.state !== 'completed' && hit.state !== 'failed') {
      throw new GeohookError('GEOHOOK_ERR_EVENT_NOT_FOUND', `${id}: already pending (${hit.state} in ${hit.queue}); nothing to replay`);
    }
    return this.requeue(hit.queue, hit.job, hit.state);
  }

  /**
   * Puts a job back, marked as a replay (a consumer's handlers see `replayedAt`). Handlers that ran are recorded in
   * the progress (see subscribe): a completed job's all run again, a failed job's only those that did not succeed.
   */
  private async requeue(queue: string, job: Job, from: RetriedJob['from']): Promise<RetriedJob> {
    await markReplayed(job, from === 'failed');
    await job.retry(from, fresh);
    return { ...eventJobRef(queue, job), from };
  }

  /** The queues a call is about: the one chosen, else all of the inspector's. */
  private chosen(choice: QueueChoice): readonly string[] {
    return choice.queue === undefined ? this.names : [choice.queue];
  }

  private notFound(id: string, names: readonly string[]): GeohookError {
    return new GeohookError(
      'GEOHOOK_ERR_EVENT_NOT_FOUND',
      `${id}: no such event in ${names.join(', ')}; completed jobs are kept ${this.completedJobsAgeSeconds} s (completedJobs.ageSeconds in GEOHOOK_CONFIG)`,
    );
  }
}
