import { readFileSync } from 'node:fs';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { EventQueue } from '../../src/queue/event-queue.js';
import { BULLMQ_VERSION } from '../../src/queue/job-script.js';
import { readableJobData } from '../../src/queue/stored-event.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import { envelopeOf } from '../helpers/envelope.js';
import { repoPath } from '../helpers/paths.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const raw = new Redis(redis.url);
t.teardown(() => raw.disconnect());

/** Everything `addStandardJob` writes for one job of `gp-events` under `prefix`, the stream ids left out. */
async function written(prefix: string, jobId: string): Promise<Record<string, unknown>> {
  const queue = `${prefix}:gp-events`;
  const events = (await raw.xrange(`${queue}:events`, '-', '+')).map(([, fields]) => fields);
  return {
    job: await raw.hgetall(`${queue}:${jobId}`),
    wait: await raw.lrange(`${queue}:wait`, 0, -1),
    marker: await raw.call('ZRANGE', `${queue}:marker`, '0', '-1', 'WITHSCORES'),
    id: await raw.get(`${queue}:id`),
    meta: await raw.hgetall(`${queue}:meta`),
    events,
  };
}

t.test('package.json pins bullmq to exactly the release whose layout the script writes', async (t) => {
  const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { dependencies: Record<string, string> };
  t.equal(pkg.dependencies.bullmq, BULLMQ_VERSION);
});

t.test("a job written by geohook's script equals one written by queue.add, field by field", async (t) => {
  const ours = uniquePrefix();
  const bullmqs = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix: ours });
  await eventQueue.ready();
  const reference = new Queue('gp-events', {
    connection,
    prefix: bullmqs,
    defaultJobOptions: eventQueue.queue('gp-events').defaultJobOptions,
  });
  t.teardown(async () => {
    await reference.close();
    await eventQueue.close();
    connection.disconnect();
  });
  const event = envelopeOf('gp');
  await eventQueue.enqueue(event);
  await reference.add(event.type, event, { jobId: event.id });

  const [mine, theirs] = await Promise.all([written(ours, event.id), written(bullmqs, event.id)]);
  const { timestamp: myTimestamp, ...myJob } = mine.job as Record<string, string>;
  const { timestamp: theirTimestamp, ...theirJob } = theirs.job as Record<string, string>;
  t.same(Object.keys(mine.job as object).sort(), Object.keys(theirs.job as object).sort(), 'the same hash fields');
  t.same(myJob, theirJob, 'name, data, opts, delay, priority: the same text');
  t.ok(Math.abs(Number(myTimestamp) - Number(theirTimestamp)) < 5000, `timestamps of the same moment: ${myTimestamp} ${theirTimestamp}`);
  t.match(myJob.opts, /"jobId":"[0-9a-f]{64}"/, 'opts name the job id, as queue.add does');
  for (const part of ['wait', 'marker', 'id', 'meta', 'events'] as const) t.same(mine[part], theirs[part], `${part}: the same`);
});

t.test("BullMQ's Worker and QueueEvents, and the dashboard, take such a job as their own", async (t) => {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix });
  await eventQueue.ready();
  // From the stream's start: events written before its first read count too.
  const queueEvents = new QueueEvents('gp-events', { connection: { url: redis.url }, prefix, lastEventId: '0-0' });
  await queueEvents.waitUntilReady();
  const seen: string[] = [];
  const event = envelopeOf('gp');
  const completed = new Promise<void>((resolve) => {
    for (const name of ['added', 'waiting', 'active', 'completed'] as const) {
      queueEvents.on(name, ({ jobId }: { jobId: string }) => {
        if (jobId !== event.id) return;
        seen.push(name);
        if (name === 'completed') resolve();
      });
    }
  });
  const processed: unknown[] = [];
  const worker = new Worker(
    'gp-events',
    async (job) => {
      processed.push({ id: job.id, name: job.name, data: job.data, attempts: job.opts.attempts });
      return 'done';
    },
    { connection: { url: redis.url }, prefix },
  );
  t.teardown(async () => {
    await worker.close();
    await queueEvents.close();
    await eventQueue.close();
    connection.disconnect();
  });
  await eventQueue.enqueue(event);
  await completed;
  t.same(processed, [{ id: event.id, name: event.type, data: event, attempts: 5 }], 'the Worker ran it once, with its data');
  t.same(seen, ['added', 'waiting', 'active', 'completed'], 'QueueEvents saw its whole life');

  const adapter = new BullMQAdapter(eventQueue.queue('gp-events'));
  t.match(await adapter.getJobCounts(), { completed: 1 }, 'the dashboard counts it');
  const [shown] = await adapter.getJobs(['completed'], 0, 10);
  t.equal(shown?.id, event.id, 'and lists it');
  t.match(readableJobData(shown?.data), {
    id: event.id,
    payload: JSON.parse(event.body),
    rawBody: Buffer.from(event.body).toString('base64'),
  });
});
