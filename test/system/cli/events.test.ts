import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { EventFamily } from '../../../src/events/envelope.js';
import { EventQueue } from '../../../src/queue/event-queue.js';
import { queueNames, type QueueName } from '../../../src/queue/names.js';
import { createProducerConnection } from '../../../src/redis/connection.js';
import { SubscriptionRegistry } from '../../../src/subscriptions/subscription-registry.js';
import { runCli } from '../../helpers/cli.js';
import { accepted, envelopeOf } from '../../helpers/envelope.js';
import { configFile, uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

const redis = await startRedis(t);

interface Queues {
  env: Record<string, string>;
  eventQueue: EventQueue;
  /** Enqueues an event of `family` and waits until it is in `state`; resolves to its id. */
  settle(family: EventFamily, state: 'failed' | 'completed'): Promise<string>;
  state(queue: QueueName, id: string): Promise<string>;
}

/**
 * Queues on a fresh prefix whose jobs get one attempt, with workers that fail every gp event and complete
 * every other one; `env` points the CLI at them.
 */
async function queues(t: Test): Promise<Queues> {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix, retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 0, jitter: 0 } } });
  await eventQueue.ready();
  const workerConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const workers = [
    new Worker('gp-events', async () => Promise.reject(new Error('handler down')), { connection: workerConnection, prefix }),
    new Worker('feature-events', async () => undefined, { connection: workerConnection, prefix }),
  ];
  t.teardown(async () => {
    await Promise.all(workers.map((worker) => worker.close()));
    await eventQueue.close();
    workerConnection.disconnect();
    connection.disconnect();
  });
  const state = (queue: QueueName, id: string): Promise<string> => eventQueue.queue(queue).getJobState(id);
  return {
    env: { REDIS_URL: redis.url, GEOHOOK_PREFIX: prefix },
    eventQueue,
    state,
    async settle(family, wanted) {
      const item = envelopeOf(family);
      await eventQueue.enqueue(accepted(item));
      await waitFor(`${item.id} ${wanted}`, async () => (await state(queueNames[family], item.id)) === wanted);
      return item.id;
    },
  };
}

/** Runs the CLI and parses the one JSON document it prints. */
async function json(t: Test, args: string[], env: Record<string, string>): Promise<unknown> {
  const result = await runCli(args, { env });
  t.equal(result.code, 0, result.stderr);
  t.equal(result.stdout.trimEnd().split('\n').length, 1, 'one JSON document');
  return JSON.parse(result.stdout) as unknown;
}

const zero = { waiting: 0, active: 0, delayed: 0, prioritized: 0, completed: 0, failed: 0, 'waiting-children': 0 };

t.test('geohook events stats prints jobs per queue and state, as JSON or a table', async (t) => {
  const q = await queues(t);
  await q.settle('gp', 'failed');
  await q.settle('feature', 'completed');
  await q.eventQueue.enqueue(accepted(envelopeOf('unknown')));
  const [stats, table] = await Promise.all([json(t, ['events', 'stats'], q.env), runCli(['events', 'stats', '--table'], { env: q.env })]);
  t.same(stats, {
    'gp-events': { ...zero, failed: 1 },
    'feature-events': { ...zero, completed: 1 },
    'unknown-events': { ...zero, waiting: 1 },
    backfill: zero,
    'change-ranges': zero,
    'change-events': zero,
  });
  t.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /^queue\s+waiting\s+active\s+delayed\s+prioritized\s+completed\s+failed\s+waiting-children$/);
  t.match(lines[1], /^gp-events\s+0\s+0\s+0\s+0\s+0\s+1\s+0$/);
  t.match(lines[3], /^unknown-events\s+1\s+0/);
});

t.test('geohook events stats lists every queue: each relay route of the config and each subscription too (issue 53)', async (t) => {
  const q = await queues(t);
  const route = { name: 'parcels', url: 'http://127.0.0.1:1/hook', types: ['change.*'], format: 'teams' };
  const config = configFile(t, { relays: [route] });
  const connection = new Redis(redis.url);
  t.teardown(() => connection.disconnect());
  await new SubscriptionRegistry(connection, q.env.GEOHOOK_PREFIX!).create({ name: 'billing', types: ['gp.*'] }, { origin: 'runtime' });
  const routeQueue = new Queue('relay-parcels', { connection, prefix: q.env.GEOHOOK_PREFIX! });
  t.teardown(() => routeQueue.close());
  await routeQueue.add('change.updated', { id: 'x' });
  const [stats, table] = await Promise.all([
    json(t, ['events', 'stats', '--config', config], q.env),
    runCli(['events', 'stats', '--table', '--config', config], { env: q.env }),
  ]);
  t.same(Object.keys(stats as object), [
    'gp-events',
    'feature-events',
    'unknown-events',
    'backfill',
    'change-ranges',
    'change-events',
    'relay-parcels',
    'sub-billing',
  ]);
  t.same((stats as Record<string, unknown>)['relay-parcels'], { ...zero, waiting: 1 });
  t.same((stats as Record<string, unknown>)['sub-billing'], zero);
  t.equal(table.code, 0, table.stderr);
  const names = table.stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => line.split(/\s+/)[0]);
  t.same(names, Object.keys(stats as object), 'the table has a row per queue, in the same order');
});

t.test('geohook events stats --services prints each service, and --table adds them below the queues', async (t) => {
  const q = await queues(t);
  const service = { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' };
  await q.eventQueue.enqueue(accepted({ ...envelopeOf('gp'), service }));
  const [services, table, servicesTable] = await Promise.all([
    json(t, ['events', 'stats', '--services'], q.env),
    runCli(['events', 'stats', '--table'], { env: q.env }),
    runCli(['events', 'stats', '--services', '--table'], { env: q.env }),
  ]);
  t.match(services, [{ service: 'Tools/Buffer.GPServer', mode: 'webhook', lastDeliveryAt: String, recentFailures: 0 }]);
  const [queuesPart, servicesPart] = table.stdout.trimEnd().split('\n\n');
  t.equal(queuesPart!.split('\n').length, 7, 'the queues table first');
  const lines = servicesPart!.split('\n');
  t.match(lines[0], /^service\s+mode\s+webhook\s+lastDelivery\s+failures24h\s+lastFailure\s+watermark\s+lastBackfill\s+lastPoll$/);
  t.match(lines[1], /^Tools\/Buffer\.GPServer\s+webhook\s+\d{4}-\d\d-\d\dT/);
  t.equal(servicesTable.stdout, `${servicesPart}\n`, '--services --table: that table alone');
});

t.test('geohook events failed lists the dead letters, by queue and limit, as JSON or a table', async (t) => {
  const q = await queues(t);
  const first = await q.settle('gp', 'failed');
  const second = await q.settle('gp', 'failed');
  await q.settle('feature', 'completed');
  const [all, limited, features, table, bad, badQueue] = await Promise.all([
    json(t, ['events', 'failed'], q.env) as Promise<{ total: number; jobs: { jobId: string }[] }>,
    json(t, ['events', 'failed', '--limit', '1'], q.env),
    json(t, ['events', 'failed', '--queue', 'feature-events'], q.env),
    runCli(['events', 'failed', '--table'], { env: q.env }),
    runCli(['events', 'failed', '--limit', '0'], { env: q.env }),
    runCli(['events', 'failed', '--queue', 'nope'], { env: q.env }),
  ]);
  t.equal(all.total, 2);
  t.same(new Set(all.jobs.map((job) => job.jobId)), new Set([first, second]));
  t.match(all.jobs[0], {
    queue: 'gp-events',
    eventId: String,
    type: 'gp.job.failed',
    hook: 'default',
    attemptsMade: 1,
    failedReason: 'handler down',
    failedAt: /^\d{4}-\d\d-\d\dT/,
  });
  t.match(limited, { total: 2, jobs: [{ queue: 'gp-events' }] });
  t.equal((limited as { jobs: unknown[] }).jobs.length, 1);
  t.same(features, { total: 0, jobs: [] });
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /^failedAt\s+queue\s+jobId\s+type\s+hook\s+attemptsMade\s+failedReason$/);
  t.match(lines[1], /^\S+Z\s+gp-events\s+[0-9a-f]{64}\s+gp\.job\.failed\s+default\s+1\s+handler down$/);
  t.equal(lines.length, 3);
  t.equal(bad.code, 1);
  t.match(bad.stderr, /--limit.*a whole number from 1/);
  t.equal(badQueue.code, 1);
  t.match(badQueue.stderr, /--queue.*gp-events/);
});

t.test('geohook events retry puts failed jobs back, by id or --all', async (t) => {
  const q = await queues(t);
  const one = await q.settle('gp', 'failed');
  const two = await q.settle('gp', 'failed');
  t.same(await json(t, ['events', 'retry', one], q.env), {
    retried: [{ queue: 'gp-events', jobId: one, eventId: one, type: 'gp.job.failed', hook: 'default', from: 'failed' }],
  });
  await waitFor(
    'the retried job failing again',
    async () =>
      (await q.eventQueue.queue('gp-events').getJob(one))?.processedOn !== undefined && (await q.state('gp-events', one)) === 'failed',
  );
  const all = (await json(t, ['events', 'retry', '--all', '--queue', 'gp-events'], q.env)) as { retried: { jobId: string }[] };
  t.same(all.retried.map((job) => job.jobId).sort(), [one, two].sort());
  const [neither, both, unknown] = await Promise.all([
    runCli(['events', 'retry'], { env: q.env }),
    runCli(['events', 'retry', one, '--all'], { env: q.env }),
    runCli(['events', 'retry', 'no-such-id'], { env: q.env }),
  ]);
  t.equal(neither.code, 1);
  t.equal(neither.stderr, 'geohook: events retry: give event ids, or --all\n');
  t.equal(both.code, 1);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^geohook: no-such-id: no such event in gp-events, feature-events, unknown-events; .*\n$/);
});

t.test("geohook events failed, retry and replay --subscription work on a subscription's dead letters", async (t) => {
  const q = await queues(t);
  const prefix = q.env.GEOHOOK_PREFIX!;
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => connection.disconnect());
  await new SubscriptionRegistry(connection, prefix).create({ name: 'permits', types: ['gp.*'] }, { origin: 'runtime' });
  const queue = new Queue('sub-permits', { connection, prefix });
  const worker = new Worker('sub-permits', async () => Promise.reject(new Error('permits down')), { connection, prefix, autorun: false });
  t.teardown(async () => {
    await worker.close();
    await queue.close();
  });
  const event = envelopeOf('gp');
  await queue.add(event.type, event, { jobId: event.id, attempts: 1 });
  void worker.run();
  const failedOnce = async (): Promise<boolean> => (await queue.getJobState(event.id)) === 'failed';
  await waitFor('the subscription job failing', failedOnce);

  const listed = (await json(t, ['events', 'failed', '--subscription', 'permits'], q.env)) as { total: number; jobs: unknown[] };
  t.match(listed, { total: 1, jobs: [{ queue: 'sub-permits', jobId: event.id, type: event.type, failedReason: 'permits down' }] });
  t.match(await json(t, ['events', 'failed'], q.env), { total: 0 }, 'without it, the family queues only');
  t.same(await json(t, ['events', 'retry', '--all', '--subscription', 'permits'], q.env), {
    retried: [{ queue: 'sub-permits', jobId: event.id, eventId: event.id, type: event.type, hook: 'default', from: 'failed' }],
  });
  await waitFor('the retried job failing again', async () => (await queue.getJob(event.id))?.attemptsStarted === 1 && failedOnce());
  t.match(await json(t, ['events', 'replay', event.id, '--subscription', 'permits'], q.env), {
    replayed: { queue: 'sub-permits', from: 'failed' },
  });

  const [unknown, both] = await Promise.all([
    runCli(['events', 'failed', '--subscription', 'permit'], { env: q.env }),
    runCli(['events', 'retry', '--all', '--queue', 'gp-events', '--subscription', 'permits'], { env: q.env }),
  ]);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^geohook: events --subscription: .*permit.*\n$/);
  t.equal(both.code, 1);
  t.equal(both.stderr, 'geohook: events: --queue gp-events or --subscription permits, not both\n');
});

t.test('geohook events replay puts a completed event back to be consumed again', async (t) => {
  const q = await queues(t);
  const id = await q.settle('feature', 'completed');
  const job = await q.eventQueue.queue('feature-events').getJob(id);
  const firstRun = job!.processedOn;
  t.same(await json(t, ['events', 'replay', id], q.env), {
    replayed: { queue: 'feature-events', jobId: id, eventId: id, type: 'feature.FeaturesCreated', hook: 'default', from: 'completed' },
  });
  await waitFor('the second run', async () => {
    const again = await q.eventQueue.queue('feature-events').getJob(id);
    return again?.finishedOn !== undefined && again.processedOn !== firstRun;
  });
});

t.test('geohook events replay of an unknown id fails with one line naming the retention', async (t) => {
  const q = await queues(t);
  const result = await runCli(['events', 'replay', 'a'.repeat(64), '--config', configFile(t, { completedJobs: { ageSeconds: 3600 } })], {
    env: q.env,
  });
  t.equal(result.code, 1);
  t.equal(result.stdout, '');
  t.match(
    result.stderr,
    /^geohook: a{64}: no such event in .*completed jobs are kept 3600 s \(completedJobs\.ageSeconds in GEOHOOK_CONFIG\)\n$/,
  );
});

t.test('geohook events fails at once with one line when Redis is unreachable', async (t) => {
  // Nothing ever listens on port 1: a command that retried Redis would not end before tap's limit.
  const result = await runCli(['events', 'stats'], { env: { REDIS_URL: 'redis://user:secret@127.0.0.1:1' } });
  t.equal(result.code, 1);
  t.equal(result.stdout, '');
  t.match(result.stderr, /^geohook: cannot reach Redis at 127\.0\.0\.1:1: .*ECONNREFUSED.*\n$/);
  t.notOk(result.stderr.includes('secret'), 'no credentials in the message');
});

t.test('geohook events without REDIS_URL and no running geohook up says so', async (t) => {
  const result = await runCli(['events', 'failed'], { cwd: t.testdir({}) });
  t.equal(result.code, 1);
  t.match(result.stderr, /^geohook: REDIS_URL: not set, and no `geohook up` is running in this directory.*\n$/);
});
