import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { subscribe } from '../../src/consumers/subscribe.js';
import { subscriptionQueueName } from '../../src/queue/names.js';
import { eventLogKey, fanoutKey, subscriptionDroppedKey } from '../../src/redis/keys.js';
import { subscriptionDestinationName } from '../../src/subscriptions/subscription-registry.js';
import { allStates } from './audit.js';
import type { SubscriptionCount } from './fault-row.js';

/** Where the fan-out stood when the wait for it ended. */
export interface FanoutProgress {
  /** True once its cursor was at the log's last entry. */
  caughtUp: boolean;
  /** Log entries after the cursor when the wait ended. */
  behind: number;
  waitedMs: number;
}

/** Log entries after the fan-out's cursor (all of them when it has none yet), counted up to 100,000. */
export async function entriesBehind(redis: Redis, prefix: string): Promise<number> {
  const cursor = (await redis.hget(fanoutKey(prefix), 'cursor')) ?? '0-0';
  const after = await redis.xrange(eventLogKey(prefix), `(${cursor}`, '+', 'COUNT', 100_000);
  return after.length;
}

/**
 * Waits until the fan-out has handed every log entry over: its cursor is at the log's last entry. The events must
 * all be stored (the load over), and a receiver running.
 */
export async function waitUntilFannedOut(redis: Redis, prefix: string, timeoutMs = 60_000): Promise<FanoutProgress> {
  const startedAtMs = Date.now();
  for (;;) {
    const behind = await entriesBehind(redis, prefix);
    const waitedMs = Date.now() - startedAtMs;
    if (behind === 0 || waitedMs > timeoutMs) return { caughtUp: behind === 0, behind, waitedMs };
    await sleep(100);
  }
}

/** What a subscription's queue holds, read through BullMQ as its consumers see it. */
export interface SubscriptionJobs {
  /** Job id and the event's `id`, one per job (a job listed in several states counted once). */
  jobs: { jobId: string; eventId: string | undefined }[];
  /** Jobs ever added to the queue (BullMQ's `id` counter, which the fan-out raises by what it adds). */
  added: number;
  /** Events dropped past its backlog cap. */
  dropped: number;
}

/** Every job of subscription `name`'s queue, in any state. */
export async function readSubscriptionJobs(redis: Redis, prefix: string, name: string): Promise<SubscriptionJobs> {
  const queue = new Queue(subscriptionQueueName(name), { connection: redis, prefix });
  try {
    const listed = await queue.getJobs(allStates, 0, -1);
    const byId = new Map(listed.map((job) => [job.id ?? '', (job.data as { id?: unknown } | undefined)?.id]));
    const jobs = [...byId].map(([jobId, eventId]) => ({ jobId, eventId: typeof eventId === 'string' ? eventId : undefined }));
    const added = Number((await redis.get(queue.toKey('id'))) ?? 0);
    const dropped = Number((await redis.hget(subscriptionDroppedKey(prefix), subscriptionDestinationName(name))) ?? 0);
    return { jobs, added, dropped };
  } finally {
    await queue.close();
  }
}

/**
 * Consumes subscription `name` with `subscribe({subscription})` until it has been handed `expected` distinct events
 * and its queue has nothing left to hand (no job waiting, active, delayed or prioritized): how many times each
 * event id was handed. Rejects after `timeoutMs`.
 */
export async function consumeSubscription(
  redis: Redis,
  prefix: string,
  name: string,
  expected: number,
  timeoutMs = 60_000,
): Promise<Map<string, number>> {
  const handed = new Map<string, number>();
  const subscription = subscribe({
    connection: redis.duplicate(),
    prefix,
    subscription: name,
    concurrency: 50,
    logger: pino({ level: 'warn' }, pino.destination(2)),
    handlers: {
      '*': (event) => {
        handed.set(event.id, (handed.get(event.id) ?? 0) + 1);
      },
    },
  });
  const queue = new Queue(subscriptionQueueName(name), { connection: redis, prefix });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const left = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
      if (handed.size >= expected && Object.values(left).every((count) => count === 0)) return handed;
      if (Date.now() > deadline)
        throw new Error(
          `subscription ${name}: ${handed.size} of ${expected} events consumed in ${timeoutMs} ms (${JSON.stringify(left)} left)`,
        );
      await sleep(50);
    }
  } finally {
    await subscription.close({ timeoutMs: 1000 });
    await queue.close();
  }
}

/** A delivery as the subscriptions audit reads it: its event id, whether it got a 2xx, and whether this subscription takes it. */
export interface AuditedDelivery {
  eventId: string;
  acknowledged: boolean;
  taken: boolean;
}

/**
 * Judges one subscription's queue: every acknowledged delivery it takes held once (by event id), no job of a delivery
 * it does not take, each job's id the event's job id in its family's queue, every event handed to a consumer once.
 * Also the ids of the deliveries held (or handed) more than once, and of the acknowledged ones it lacks.
 */
export function judgeSubscription(
  name: string,
  deliveries: readonly AuditedDelivery[],
  held: SubscriptionJobs,
  handed: ReadonlyMap<string, number>,
  familyJobIds: ReadonlyMap<string, string>,
): { count: SubscriptionCount; lostIds: Set<string>; doubledIds: Set<string>; problems: string[] } {
  const counts = new Map<string, number>();
  for (const { eventId } of held.jobs) if (eventId !== undefined) counts.set(eventId, (counts.get(eventId) ?? 0) + 1);
  const taken = new Set(deliveries.filter((delivery) => delivery.taken).map((delivery) => delivery.eventId));
  const lostIds = new Set<string>();
  const doubledIds = new Set<string>();
  let takes = 0;
  let found = 0;
  for (const { eventId, acknowledged, taken: takesIt } of deliveries) {
    if (!takesIt) continue;
    const stored = counts.get(eventId) ?? 0;
    if (acknowledged) takes += 1;
    if (acknowledged && stored > 0) found += 1;
    if (acknowledged && stored === 0) lostIds.add(eventId);
  }
  for (const [eventId, stored] of counts) if (stored > 1) doubledIds.add(eventId);
  for (const [eventId, times] of handed) if (times > 1) doubledIds.add(eventId);
  const strangers = held.jobs.filter((job) => job.eventId === undefined || !taken.has(job.eventId)).length;
  const otherIds = held.jobs.filter((job) => job.eventId !== undefined && familyJobIds.get(job.eventId) !== job.jobId).length;
  const count: SubscriptionCount = {
    name,
    takes,
    found,
    lost: lostIds.size,
    duplicated: doubledIds.size,
    strangers,
    consumed: handed.size,
  };
  const queue = subscriptionQueueName(name);
  const problems: string[] = [];
  if (lostIds.size > 0) problems.push(`${queue}: ${lostIds.size} acknowledged events it takes are not in it`);
  if (doubledIds.size > 0) problems.push(`${queue}: ${doubledIds.size} events held or handed to its consumer more than once`);
  if (strangers > 0) problems.push(`${queue}: ${strangers} jobs of events it does not take`);
  if (otherIds > 0) problems.push(`${queue}: ${otherIds} jobs whose id is not their event's job id in its family's queue`);
  if (held.added !== held.jobs.length) problems.push(`${queue}: ${held.added} jobs added to it, ${held.jobs.length} held`);
  if (held.dropped > 0) problems.push(`${queue}: ${held.dropped} events dropped past its backlog cap`);
  if (handed.size !== held.jobs.length)
    problems.push(`${queue}: its consumer was handed ${handed.size} events of the ${held.jobs.length} held`);
  return { count, lostIds, doubledIds, problems };
}
