import type { Job } from 'bullmq';
import { bullmq } from '../commonjs/bullmq.js';
import { GeohookError } from '../errors.js';
import { openQueue } from '../queue/open-queue.js';
import { markReplayed } from '../queue/replay-mark.js';
import type { RedisClient } from '../redis/connection.js';
import { relayQueueName } from './relay-queues.js';

/** Dead letters read per page while replaying every one. */
const PAGE = 500;

/**
 * Replays dead letters of a route: each goes back to its queue with every try of the route's schedule again, under
 * the same `webhook-id` and body, with a `geohook-replayed-at` header. `ids`: those events (each must be a dead letter of the route); none: every dead letter.
 * Resolves to the ids replayed.
 */
export async function replayDeadLetters(
  connection: RedisClient,
  prefix: string,
  route: string,
  ids: readonly string[] = [],
): Promise<string[]> {
  const queue = openQueue(relayQueueName(route), { connection, prefix });
  try {
    const jobs: Job[] = [];
    if (ids.length > 0) {
      for (const id of ids) {
        const job = await bullmq.Job.fromId(queue, id);
        if (job === undefined || !(await job.isFailed()))
          throw new GeohookError('GEOHOOK_ERR_RELAY_NOT_DEAD_LETTER', `relay replay: ${id} is not a dead letter of route "${route}"`);
        jobs.push(job);
      }
    }
    const replayed: string[] = [];
    const retry = async (job: Job): Promise<void> => {
      await markReplayed(job, false);
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
      replayed.push(job.id!);
    };
    if (ids.length > 0) for (const job of jobs) await retry(job);
    else {
      // A replayed job that fails again at once is back in the set: each is replayed once per call.
      const seen = new Set<string>();
      for (let page = await queue.getFailed(0, PAGE - 1); ; page = await queue.getFailed(0, PAGE - 1)) {
        const fresh = page.filter((job) => !seen.has(job.id!));
        if (fresh.length === 0) break;
        for (const job of fresh) {
          seen.add(job.id!);
          await retry(job);
        }
      }
    }
    return replayed;
  } finally {
    await queue.close();
  }
}
