import type { Job, JobState, Queue } from 'bullmq';
import { allQueueNames } from './names.js';

/** Hands out the BullMQ queue of each name: an {@link EventQueue} the three family queues, {@link oneQueue} its own. */
export interface QueueSource {
  queue(name: string): Queue;
}

/** A {@link QueueSource} of one queue (asked for by its name). */
export const oneQueue = (queue: Queue): QueueSource => ({ queue: () => queue });

/** A job found by {@link findEventJob}, with the queue it is in and its state when it was read. */
export interface FoundJob {
  queue: string;
  job: Job;
  state: JobState | 'unknown';
}

/** A job as the inspector reports it. `eventId` is the envelope's `id`, which a rare job id only starts with. */
export interface EventJobRef {
  queue: string;
  jobId: string;
  eventId: string | undefined;
  /** The job name: the event type. */
  type: string;
  hook: string | undefined;
}

/** What {@link EventJobRef} says of `job`; data that is not an envelope leaves `eventId` and `hook` out. */
export function eventJobRef(queue: string, job: Job): EventJobRef {
  const data = (job.data ?? {}) as { id?: unknown; hook?: unknown };
  return {
    queue,
    jobId: job.id!,
    eventId: typeof data.id === 'string' ? data.id : undefined,
    type: job.name,
    hook: typeof data.hook === 'string' ? data.hook : undefined,
  };
}

/** The finished jobs of `queue` stored under `<eventId>-<hook>-<time>` whose data is that event. */
async function collisionJobs(name: string, queue: Queue, eventId: string): Promise<FoundJob[]> {
  const ids = (await queue.getRanges(['completed', 'failed'], 0, -1)).filter((id) => id.startsWith(`${eventId}-`));
  const jobs = (await Promise.all(ids.map((id) => queue.getJob(id)))) as (Job | undefined)[];
  const found = jobs.filter((job): job is Job => (job?.data as { id?: unknown } | undefined)?.id === eventId);
  return Promise.all(found.map(async (job) => ({ queue: name, job, state: await job.getState() })));
}

/**
 * The job of an event, by job id (the event id, docs/events.md) in any of `queues`. When no job has that id,
 * the finished jobs the receiver stored under `<event id>-<hook>-<time>` (the same bytes on another hook)
 * are looked for among the ids of the completed and failed sets; of several, the latest finished wins.
 */
export async function findEventJob(
  source: QueueSource,
  id: string,
  queues: readonly string[] = allQueueNames,
): Promise<FoundJob | undefined> {
  const exact = await Promise.all(queues.map(async (name) => ({ name, job: (await source.queue(name).getJob(id)) as Job | undefined })));
  const hit = exact.find(({ job }) => job !== undefined);
  if (hit !== undefined) return { queue: hit.name, job: hit.job!, state: await hit.job!.getState() };
  const collisions = (await Promise.all(queues.map((name) => collisionJobs(name, source.queue(name), id)))).flat();
  return collisions.sort((a, b) => (b.job.finishedOn ?? 0) - (a.job.finishedOn ?? 0))[0];
}
