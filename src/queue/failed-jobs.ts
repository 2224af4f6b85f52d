import type { Job } from 'bullmq';
import { ConfigError } from '../errors.js';
import { eventJobRef, type EventJobRef, type QueueSource } from './find-event-job.js';
import { allQueueNames } from './names.js';

/** A dead letter: a job that used up its attempts (or was poison) and stays in the failed set. */
export interface FailedJob extends EventJobRef {
  attemptsMade: number;
  failedReason: string;
  /** ISO 8601 time of the last failure. */
  failedAt: string | undefined;
}

/** One page of dead letters, newest first. */
export interface FailedJobsPage {
  /** Failed jobs in the queues asked for, in all. */
  total: number;
  jobs: FailedJob[];
}

/** Which dead letters {@link listFailedJobs} returns. */
export interface FailedJobsQuery {
  /** The queues to list; the three family queues when absent. */
  queues?: readonly string[] | undefined;
  /** @defaultValue 50 */
  limit?: number | undefined;
  /** Newest ones skipped (paging). @defaultValue 0 */
  offset?: number | undefined;
}

/** Dead letters, newest first, of the queues asked for (the three family queues by default). */
export async function listFailedJobs(source: QueueSource, query: FailedJobsQuery = {}): Promise<FailedJobsPage> {
  const { limit = 50, offset = 0 } = query;
  if (!Number.isInteger(limit) || limit < 1) throw new ConfigError('failed jobs: limit is a whole number from 1');
  if (!Number.isInteger(offset) || offset < 0) throw new ConfigError('failed jobs: offset is a whole number from 0');
  const names = query.queues ?? allQueueNames;
  const perQueue = await Promise.all(
    names.map(async (name) => {
      const queue = source.queue(name);
      // The newest offset + limit of each queue hold the page of all of them.
      const [total, jobs] = await Promise.all([queue.getFailedCount(), queue.getFailed(0, offset + limit - 1) as Promise<Job[]>]);
      return { total, jobs: jobs.map((job) => ({ name, job })) };
    }),
  );
  const newestFirst = perQueue.flatMap((page) => page.jobs).sort((a, b) => (b.job.finishedOn ?? 0) - (a.job.finishedOn ?? 0));
  return {
    total: perQueue.reduce((sum, page) => sum + page.total, 0),
    jobs: newestFirst.slice(offset, offset + limit).map(({ name, job }) => ({
      ...eventJobRef(name, job),
      attemptsMade: job.attemptsMade,
      failedReason: job.failedReason,
      failedAt: job.finishedOn === undefined ? undefined : new Date(job.finishedOn).toISOString(),
    })),
  };
}
