import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { RoutedEvent } from '../../src/fanout/routed-event.js';
import { eventLogKey, streamLaneGroup } from '../../src/redis/keys.js';
import { LaneJobs } from '../../src/streams/lane-jobs.js';
import { LaneLog } from '../../src/streams/lane-log.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { appendToLog, burstEvent } from '../helpers/stream-pipeline.js';

const redis = await startRedis(t);
const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
t.teardown(() => raw.disconnect());

const QUEUE = 'relay-lane';
const TOKEN = 'the-lane';
const LOCK_MS = 10_000;
/** Times differ between the two runs: compared by presence, not value. */
const TIMES = new Set(['timestamp', 'processedOn', 'finishedOn']);

/** A queue under `prefix` holding `count` jobs as the fan-out writes a stream route's (one try, the completed kept by count and age). */
async function filledQueue(t: Test, prefix: string, count: number): Promise<Queue<RoutedEvent>> {
  const queue = new Queue<RoutedEvent>(QUEUE, { connection: raw, prefix });
  t.teardown(() => queue.close());
  const opts = { attempts: 1, removeOnComplete: { age: 3600, count: 2 }, removeOnFail: false };
  for (let n = 0; n < count; n += 1) await queue.add('change.updated', burstEvent(n, 3, 'l'), { ...opts, jobId: `job-${n}` });
  return queue;
}

/** What a worker leaves in Redis for queue `QUEUE` under `prefix`: job hashes, lists, sets and events, times by presence only. */
async function state(prefix: string, count: number): Promise<Record<string, unknown>> {
  const key = (name: string): string => `${prefix}:${QUEUE}:${name}`;
  const jobs = await Promise.all(
    Array.from({ length: count }, async (_, n) => {
      const hash = await raw.hgetall(key(`job-${n}`));
      return Object.fromEntries(Object.entries(hash).map(([field, value]) => [field, TIMES.has(field) ? 'a time' : value]));
    }),
  );
  return {
    jobs,
    locks: await Promise.all(Array.from({ length: count }, (_, n) => raw.get(key(`job-${n}:lock`)))),
    wait: await raw.lrange(key('wait'), 0, -1),
    active: await raw.lrange(key('active'), 0, -1),
    completed: await raw.zrange(key('completed'), '0', '-1'),
    stalled: await raw.smembers(key('stalled')),
    marker: await raw.zrange(key('marker'), '0', '-1'),
    meta: await raw.hgetall(key('meta')),
    events: (await raw.xrange(key('events'), '-', '+')).map(([, fields]) => fields),
  };
}

/** The fields of the jobs a worker takes that the stream lane reads. */
const taken = (jobs: readonly Job<RoutedEvent>[]): unknown[] =>
  jobs.map((job) => ({
    id: job.id,
    name: job.name,
    data: job.data,
    opts: job.opts,
    attemptsStarted: job.attemptsStarted,
    token: job.token,
  }));

t.test("the lane's batched take and completion leave the jobs as BullMQ's worker does, one at a time (issue 56)", async (t) => {
  const [theirs, mine] = [uniquePrefix(), uniquePrefix()];
  await filledQueue(t, theirs, 5);
  const myQueue = await filledQueue(t, mine, 5);
  const worker = new Worker<RoutedEvent>(QUEUE, null, { connection: raw, prefix: theirs, autorun: false, lockDuration: LOCK_MS });
  t.teardown(() => worker.close());
  const lane = new LaneJobs(raw, myQueue, TOKEN, LOCK_MS);

  // Four of five taken: the marker stays, as jobs still wait.
  const theirJobs: Job<RoutedEvent>[] = [];
  for (let n = 0; n < 4; n += 1) theirJobs.push((await worker.getNextJob(TOKEN, { block: false }))!);
  const myJobs = await lane.take(4);
  t.same(taken(myJobs), taken(theirJobs), 'the same jobs, in the same order');
  t.same(await state(mine, 5), await state(theirs, 5), 'taken alike');

  // Three completed at once: the completed set kept to two, as after BullMQ's three calls.
  for (const job of theirJobs.slice(0, 3)) await job.moveToCompleted(undefined, TOKEN, false);
  t.same(await Promise.all(myJobs.slice(0, 3).map((job) => lane.complete(job))), [true, true, true]);
  t.same(await state(mine, 5), await state(theirs, 5), 'completed alike');

  // The rest: the queue left empty says drained.
  theirJobs.push((await worker.getNextJob(TOKEN, { block: false }))!);
  myJobs.push(...(await lane.take(10)));
  for (const job of theirJobs.slice(3)) await job.moveToCompleted(undefined, TOKEN, false);
  t.same(await Promise.all(myJobs.slice(3).map((job) => lane.complete(job))), [true, true]);
  t.same(await state(mine, 5), await state(theirs, 5), 'drained alike');
});

t.test(
  'a job taken has its lock renewed; one whose lock is no longer the lane’s is not completed; a paused queue gives none',
  async (t) => {
    const prefix = uniquePrefix();
    const queue = await filledQueue(t, prefix, 3);
    const lane = new LaneJobs(raw, queue, TOKEN, LOCK_MS);
    const [first, second] = await lane.take(2);
    t.equal(await second!.extendLock(TOKEN, LOCK_MS), 1, 'its lock renewed as a worker renews it');
    await raw.set(`${prefix}:${QUEUE}:${first!.id}:lock`, 'another-holder');
    t.same(await Promise.all([lane.complete(first!), lane.complete(second!)]), [false, true]);
    t.same(await raw.lrange(`${prefix}:${QUEUE}:active`, 0, -1), [first!.id], 'left taken');
    await queue.pause();
    t.same(await lane.take(5), [], 'paused: none taken');
    await queue.resume();
    t.same(
      (await lane.take(5)).map((job) => job.id),
      ['job-2'],
    );
  },
);

t.test("a dead letter the lane writes is the failed job BullMQ's worker leaves, and replays as one", async (t) => {
  const [theirs, mine] = [uniquePrefix(), uniquePrefix()];
  const event = burstEvent(0, 1, 'f');
  const opts = { attempts: 1, removeOnComplete: { age: 3600, count: 2 }, removeOnFail: false };
  const theirQueue = new Queue<RoutedEvent>(QUEUE, { connection: raw, prefix: theirs });
  t.teardown(() => theirQueue.close());
  await theirQueue.add(event.type, event, { ...opts, jobId: event.id });
  const worker = new Worker<RoutedEvent>(QUEUE, null, { connection: raw, prefix: theirs, autorun: false, lockDuration: LOCK_MS });
  t.teardown(() => worker.close());
  const job = (await worker.getNextJob(TOKEN, { block: false }))!;
  await job.moveToFailed(new UnrecoverableError('NATS at b:4222: refused'), TOKEN, false);

  const myQueue = new Queue<RoutedEvent>(QUEUE, { connection: raw, prefix: mine });
  t.teardown(() => myQueue.close());
  await appendToLog(raw, mine, [event]);
  await raw.xgroup('CREATE', eventLogKey(mine), streamLaneGroup('lane'), '0');
  const laneLog = new LaneLog(raw, raw, mine, 'lane');
  const [entry] = (await laneLog.readNew(1, 0))!.entries;
  await laneLog.deadLetter(entry!, myQueue, opts, 'NATS at b:4222: refused');

  const failed = async (queue: Queue<RoutedEvent>): Promise<unknown> => {
    const [dead] = await queue.getFailed();
    return {
      id: dead!.id,
      name: dead!.name,
      data: dead!.data,
      opts: dead!.opts,
      failedReason: dead!.failedReason,
      attemptsMade: dead!.attemptsMade,
      attemptsStarted: dead!.attemptsStarted,
      finished: dead!.finishedOn !== undefined,
      processed: dead!.processedOn !== undefined,
      state: await dead!.getState(),
    };
  };
  t.same(await failed(myQueue), await failed(theirQueue), 'the same failed job');
  // BullMQ says `drained` after it too: the queue is left empty; the lane's dead letter was never waiting in it.
  const failedEvent = async (prefix: string): Promise<string[] | undefined> =>
    (await raw.xrange(`${prefix}:${QUEUE}:events`, '-', '+')).map(([, fields]) => fields).find((fields) => fields[1] === 'failed');
  t.same(await failedEvent(mine), await failedEvent(theirs), 'the same failed event');
  t.same((await raw.xpending(eventLogKey(mine), streamLaneGroup('lane')))[0], 0, 'its entry finished');
  const [dead] = await myQueue.getFailed();
  await dead!.retry('failed');
  t.same(await myQueue.getWaiting().then((jobs) => jobs.map(({ id }) => id)), [event.id], 'replayed: waiting again');
});
