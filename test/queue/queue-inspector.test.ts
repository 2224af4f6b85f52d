import { setTimeout as sleep } from 'node:timers/promises';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { RetryPolicy } from '../../src/config/retry-policy.js';
import { subscribe } from '../../src/consumers/subscribe.js';
import type { StoredEvent } from '../../src/events/envelope.js';
import { EventQueue } from '../../src/queue/event-queue.js';
import { dedupDigest } from '../../src/queue/job-script.js';
import { queueNames, type QueueName } from '../../src/queue/names.js';
import { QueueInspector } from '../../src/queue/queue-inspector.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import { dedupKey } from '../../src/redis/keys.js';
import { accepted, envelopeOf } from '../helpers/envelope.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const once: RetryPolicy = { attempts: 1, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } };

interface Setup {
  prefix: string;
  connection: Redis;
  eventQueue: EventQueue;
  inspector: QueueInspector;
}

/** An EventQueue and an inspector on a fresh prefix, with `retry` as the jobs' policy. */
async function setup(t: Test, retry: RetryPolicy = once): Promise<Setup> {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix, retry });
  await eventQueue.ready();
  t.teardown(async () => {
    await eventQueue.close();
    connection.disconnect();
  });
  return { prefix, connection, eventQueue, inspector: new QueueInspector({ queues: eventQueue, completedJobsAgeSeconds: 60 }) };
}

/** A BullMQ Worker on `queue` running `process`, closed at teardown. */
function worker(t: Test, setup: Setup, queue: QueueName, process: (job: Job) => Promise<unknown>): Worker {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const running = new Worker(queue, process, { connection, prefix: setup.prefix });
  t.teardown(async () => {
    await running.close();
    connection.disconnect();
  });
  return running;
}

const failing = async (job: Job): Promise<never> => {
  throw new Error(`boom ${(job.data as StoredEvent).hook}`);
};

async function stateOf(setup: Setup, queue: QueueName, id: string): Promise<string> {
  return setup.eventQueue.queue(queue).getJobState(id);
}

/** Enqueues `events` one by one and waits until each is in `state`. */
async function settle(setup: Setup, events: StoredEvent[], state: 'failed' | 'completed'): Promise<void> {
  for (const item of events) {
    await setup.eventQueue.enqueue(accepted(item));
    await waitFor(`${item.id} ${state}`, async () => (await stateOf(setup, queueNames[item.family], item.id)) === state);
    await sleep(2); // distinct finishedOn times
  }
}

const zero = { waiting: 0, active: 0, delayed: 0, prioritized: 0, completed: 0, failed: 0, 'waiting-children': 0 };

t.test('counts report every state of every queue', async (t) => {
  const s = await setup(t);
  await s.eventQueue.enqueue(accepted(envelopeOf('gp')));
  await s.eventQueue.enqueue(accepted(envelopeOf('feature')));
  t.same(await s.inspector.counts(), {
    'gp-events': { ...zero, waiting: 1 },
    'feature-events': { ...zero, waiting: 1 },
    'unknown-events': zero,
  });
  worker(t, s, 'gp-events', failing);
  await waitFor('the failure', async () => (await s.inspector.counts())['gp-events'].failed === 1);
  t.same((await s.inspector.counts())['gp-events'], { ...zero, failed: 1 });
});

t.test('failed lists dead letters newest first, with reason and attempts, by queue and by page', async (t) => {
  const s = await setup(t);
  worker(t, s, 'gp-events', failing);
  worker(t, s, 'feature-events', failing);
  const events = [envelopeOf('gp', 'a'), envelopeOf('feature', 'b'), envelopeOf('gp', 'c')];
  await settle(s, events, 'failed');
  const all = await s.inspector.failed();
  t.equal(all.total, 3);
  t.same(
    all.jobs.map((job) => job.hook),
    ['c', 'b', 'a'],
  );
  t.match(all.jobs[0], {
    queue: 'gp-events',
    jobId: events[2]!.id,
    eventId: events[2]!.id,
    type: 'gp.job.failed',
    attemptsMade: 1,
    failedReason: 'boom c',
  });
  t.ok(Date.parse(all.jobs[0]!.failedAt!) >= Date.parse(all.jobs[1]!.failedAt!), 'failedAt is an ISO time, newest first');
  t.same(
    (await s.inspector.failed({ limit: 1, offset: 1 })).jobs.map((job) => job.hook),
    ['b'],
  );
  const features = await s.inspector.failed({ queue: 'feature-events' });
  t.same([features.total, features.jobs.map((job) => job.hook)], [1, ['b']]);
  await t.rejects(s.inspector.failed({ limit: 0 }), { code: 'GEOHOOK_ERR_CONFIG' });
  await t.rejects(s.inspector.failed({ offset: -1 }), { code: 'GEOHOOK_ERR_CONFIG' });
});

t.test('retry puts a dead letter back with its whole retry policy, and a worker consumes it again', async (t) => {
  const s = await setup(t, { attempts: 2, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } });
  let calls = 0;
  let fail = true;
  worker(t, s, 'gp-events', async () => {
    calls += 1;
    if (fail) throw new Error('down');
  });
  const dead = envelopeOf('gp');
  await settle(s, [dead], 'failed');
  t.equal(calls, 2);
  t.same(await s.inspector.retry([dead.id]), [
    { queue: 'gp-events', jobId: dead.id, eventId: dead.id, type: 'gp.job.failed', hook: 'default', from: 'failed' },
  ]);
  await waitFor('two more attempts', async () => (await stateOf(s, 'gp-events', dead.id)) === 'failed' && calls === 4);
  fail = false;
  await s.inspector.retry([dead.id]);
  await waitFor('completion', async () => (await stateOf(s, 'gp-events', dead.id)) === 'completed');
  t.equal(calls, 5);
});

t.test('retry checks every id first: an unknown, pending or other-queue id retries nothing', async (t) => {
  const s = await setup(t);
  worker(t, s, 'gp-events', failing);
  const dead = envelopeOf('gp');
  await settle(s, [dead], 'failed');
  const pending = envelopeOf('feature');
  await s.eventQueue.enqueue(accepted(pending));
  await t.rejects(s.inspector.retry([dead.id, 'no-such-id']), {
    code: 'GEOHOOK_ERR_EVENT_NOT_FOUND',
    message: /^no-such-id: no such event/,
  });
  await t.rejects(s.inspector.retry([dead.id, pending.id]), {
    code: 'GEOHOOK_ERR_EVENT_NOT_FOUND',
    message: /not failed \(it is waiting in feature-events\)/,
  });
  await t.rejects(s.inspector.retry([dead.id], { queue: 'feature-events' }), { code: 'GEOHOOK_ERR_EVENT_NOT_FOUND' });
  t.equal(await stateOf(s, 'gp-events', dead.id), 'failed', 'nothing was retried');
});

t.test('retryAll retries every failed job of a queue once, also when two run at the same time', async (t) => {
  const s = await setup(t);
  const workers = [worker(t, s, 'gp-events', failing), worker(t, s, 'feature-events', failing)];
  const gp = [envelopeOf('gp'), envelopeOf('gp')];
  const feature = envelopeOf('feature');
  await settle(s, [...gp, feature], 'failed');
  await Promise.all(workers.map((running) => running.close()));
  const [first, second] = await Promise.all([s.inspector.retryAll({ queue: 'gp-events' }), s.inspector.retryAll({ queue: 'gp-events' })]);
  t.same([...first!, ...second!].map((job) => job.jobId).sort(), gp.map((item) => item.id).sort());
  t.match((await s.inspector.counts())['gp-events'], { waiting: 2, failed: 0 });
  t.same(
    (await s.inspector.retryAll()).map((job) => job.jobId),
    [feature.id],
    'the rest: the feature queue',
  );
  t.same(await s.inspector.retryAll(), []);
});

t.test('replay consumes a completed event again with the same id and data; deduplication neither blocks it nor is lost', async (t) => {
  const s = await setup(t);
  const seen: { id: string | undefined; data: unknown }[] = [];
  worker(t, s, 'feature-events', async (job) => void seen.push({ id: job.id, data: job.data }));
  const done = envelopeOf('feature');
  await settle(s, [done], 'completed');
  const digest = dedupDigest('default', done.id);
  t.equal(await s.connection.exists(Buffer.concat([Buffer.from(dedupKey(s.prefix, '')), digest])), 1, 'the dedup key is live');
  t.same(await s.inspector.replay(done.id), {
    queue: 'feature-events',
    jobId: done.id,
    eventId: done.id,
    type: 'feature.FeaturesCreated',
    hook: 'default',
    from: 'completed',
  });
  await waitFor('the replay', async () => seen.length === 2 && (await stateOf(s, 'feature-events', done.id)) === 'completed');
  t.same(seen[1], seen[0], 'same job id and data');
  t.same(seen[0], { id: done.id, data: done });
  t.same(await s.eventQueue.enqueue(accepted(done)), { duplicate: true, spooled: false }, 'a repeated delivery is still a duplicate');
});

t.test('replay runs every handler of a subscription again', async (t) => {
  const s = await setup(t);
  const calls: string[] = [];
  const subscription = subscribe({
    connection: redis.url,
    prefix: s.prefix,
    handlers: { 'gp.*': () => void calls.push('gp'), '*': () => void calls.push('any') },
  });
  t.teardown(() => subscription.close({ timeoutMs: 1000 }));
  const done = envelopeOf('gp');
  await settle(s, [done], 'completed');
  t.same(calls, ['gp', 'any']);
  await s.inspector.replay(done.id);
  await waitFor('the replay', async () => calls.length === 4);
  t.same(calls, ['gp', 'any', 'gp', 'any']);
});

t.test('a replayed or retried event reaches handlers marked with replayedAt, under the same id (issue 53)', async (t) => {
  const s = await setup(t);
  let fail = true;
  const seen: { id: string; replayedAt: string | undefined }[] = [];
  const subscription = subscribe({
    connection: redis.url,
    prefix: s.prefix,
    handlers: {
      '*': (event, context) => {
        seen.push({ id: event.id, replayedAt: context.replayedAt });
        if (fail && event.id === dead.id) throw new Error('down');
      },
    },
  });
  t.teardown(() => subscription.close({ timeoutMs: 1000 }));
  const done = envelopeOf('feature');
  const dead = envelopeOf('gp');
  await settle(s, [done], 'completed');
  await settle(s, [dead], 'failed');
  t.same(seen, [
    { id: done.id, replayedAt: undefined },
    { id: dead.id, replayedAt: undefined },
  ]);
  fail = false;
  const before = Date.now();
  await s.inspector.replay(done.id);
  await s.inspector.retry([dead.id]);
  await waitFor('the replay and the retry', async () => seen.length === 4 && (await stateOf(s, 'gp-events', dead.id)) === 'completed');
  for (const { id, replayedAt } of seen.slice(2)) {
    t.ok([done.id, dead.id].includes(id), 'the same event id');
    t.ok(Date.parse(replayedAt!) >= before - 1000, `${id}: marked with the time of its replay`);
  }
});

t.test('replay retries a failed event, refuses a pending one, and names the retention for an unknown one', async (t) => {
  const s = await setup(t);
  let calls = 0;
  worker(t, s, 'gp-events', async (job) => {
    calls += 1;
    return failing(job);
  });
  const dead = envelopeOf('gp');
  await settle(s, [dead], 'failed');
  const pending = envelopeOf('unknown');
  await s.eventQueue.enqueue(accepted(pending));
  t.match(await s.inspector.replay(dead.id), { jobId: dead.id, from: 'failed' });
  await waitFor('the second failure', async () => calls === 2 && (await stateOf(s, 'gp-events', dead.id)) === 'failed');
  t.equal((await s.inspector.failed()).jobs[0]!.attemptsMade, 1, 'with its whole retry policy again');
  await t.rejects(s.inspector.replay(pending.id), {
    code: 'GEOHOOK_ERR_EVENT_NOT_FOUND',
    message: /already pending \(waiting in unknown-events\)/,
  });
  await t.rejects(s.inspector.replay('f'.repeat(64)), {
    code: 'GEOHOOK_ERR_EVENT_NOT_FOUND',
    message:
      /no such event in gp-events, feature-events, unknown-events; completed jobs are kept 60 s \(completedJobs\.ageSeconds in GEOHOOK_CONFIG\)/,
  });
});

t.test('an event stored under a job id of its own (same bytes on another hook) is found by its event id', async (t) => {
  const s = await setup(t);
  const seen: (string | undefined)[] = [];
  worker(t, s, 'gp-events', async (job) => void seen.push(job.id));
  const first = envelopeOf('gp', 'default', '{"same":"bytes"}');
  const second = envelopeOf('gp', 'other', '{"same":"bytes"}');
  await settle(s, [first], 'completed');
  await s.eventQueue.enqueue(accepted(second));
  await waitFor('both', async () => seen.length === 2 && (await s.inspector.counts())['gp-events'].completed === 2);
  const collisionId = seen[1]!;
  t.match(collisionId, new RegExp(`^${first.id}-other-`));
  await (await s.eventQueue.queue('gp-events').getJob(first.id))!.remove();
  t.match(await s.inspector.replay(first.id), { jobId: collisionId, eventId: first.id, hook: 'other', from: 'completed' });
  await waitFor('the replay', async () => seen.length === 3);
  t.equal(seen[2], collisionId);
});
