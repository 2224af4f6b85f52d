import { bullmq } from '../commonjs/bullmq.js';
import { parseScope } from '../events/tracked-ranges.js';
import { longJobOptions, longJobWorkerOptions } from '../queue/long-jobs.js';
import { openQueue } from '../queue/open-queue.js';
import { logWorkerErrors } from '../queue/worker-errors.js';
import { startPollLoop } from '../retry/poll-loop.js';
import { changeEventsQueueName } from './change-event.js';
import { changesQueueName } from './change-queues.js';
import { followScopes } from './follow-scopes.js';
import type { ClaimedRange } from './range-claims.js';
import { resolveJob, type ResolveJobData } from './range-jobs.js';
import { parentReaderOf } from './read-parent-row.js';
import { rangeJobFailed, resolveRangeJob } from './resolve-job.js';
import { createResolverContext, type ChangesOptions } from './resolver-context.js';
import { startSubmissionCloser } from './submission-closer.js';

/** A running resolver. */
export interface Changes {
  /** Why change events are not followed yet (a service not read once), for `/readyz`; undefined once they are. */
  notReadyReason(): string | undefined;
  close(): Promise<void>;
}

/**
 * Change events (docs/changes.md): each scope of the CHANGES services follows its watermark (`follow-scopes.ts`); a
 * range it moved over is claimed (one at a time per scope) and resolved on the `change-ranges` queue, off the
 * acknowledgement path, into one change event per changed feature on `change-events` (`resolve-job.ts`). Safe with
 * any number of receivers.
 */
export function startChanges(options: ChangesOptions): Changes {
  const { connection, prefix, hook } = options;
  // Redis going away is reported by the worker and retried.
  const queue = openQueue<ResolveJobData>(changesQueueName, { connection, prefix, defaultJobOptions: longJobOptions });
  const events = openQueue(changeEventsQueueName, { connection, prefix, defaultJobOptions: options.jobOptions });
  const context = createResolverContext(options, events);
  const { log } = context;

  const enqueue = async (range: ClaimedRange): Promise<void> => {
    const job = resolveJob({ ...range, hook, serviceUrl: context.urlOf(parseScope(range.scope).service) });
    await queue.add(job.name, job.data, job.opts);
  };
  const follower = followScopes(context, enqueue);

  const worker = new bullmq.Worker<ResolveJobData, number>(changesQueueName, (job) => resolveRangeJob(context, job), {
    connection,
    prefix,
    concurrency: options.concurrency ?? 8,
    ...longJobWorkerOptions,
  });
  worker.on('failed', (job, err) => rangeJobFailed(context, job, err));
  logWorkerErrors(worker, log, 'change resolver error');

  const loop = startPollLoop({
    check: follower.tick,
    intervalMs: options.intervalMs ?? 100,
    failed: (err) => log.warn({ err }, 'change ranges not checked: retrying'),
  });

  const closer = startSubmissionCloser({ store: context.submissions, writer: context.writer, readParent: parentReaderOf(context), log });
  // A range resolved frees its scope for the next one, and may have made submissions due: both are looked for at
  // once, not at the next interval.
  worker.on('completed', () => {
    loop.wake();
    closer.wake();
  });

  log.info({ services: options.services, track: options.track }, 'following the services');
  return {
    notReadyReason: follower.notReadyReason,
    async close() {
      await loop.close();
      await closer.close();
      await worker.close(true);
      await Promise.all([queue.close(), events.close()]);
    },
  };
}
