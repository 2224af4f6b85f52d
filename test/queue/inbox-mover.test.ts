import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { EventQueue } from '../../src/queue/event-queue.js';
import { InboxMover } from '../../src/queue/inbox-mover.js';
import { queueNames } from '../../src/queue/names.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import { envelopeOf } from '../helpers/envelope.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const retry = { attempts: 3, backoff: { type: 'fixed', delayMs: 10, jitter: 0 } } as const;

/** An EventQueue on `prefix`, closed at teardown; `moveInbox: false` makes one that only accepts. */
async function eventQueue(t: Test, prefix: string, moveInbox: boolean): Promise<EventQueue> {
  const connection = createProducerConnection(redis.url);
  const queue = new EventQueue({ connection, prefix, retry, moveInbox });
  await queue.ready();
  t.teardown(async () => {
    await queue.close(0);
    connection.disconnect();
  });
  return queue;
}

t.test('accepted events wait in the inbox until a mover makes them jobs with the configured options', async (t) => {
  const prefix = uniquePrefix();
  const acceptor = await eventQueue(t, prefix, false);
  const events = [envelopeOf('gp'), envelopeOf('feature'), envelopeOf('unknown'), envelopeOf('gp')];
  for (const event of events) t.same(await acceptor.enqueue(event), { duplicate: false, spooled: false });
  t.equal(await acceptor.inboxLength(), 4, 'acknowledged, not yet jobs');
  t.equal(await acceptor.queue('gp-events').getJob(events[0]!.id), undefined);

  const mover = await eventQueue(t, prefix, true);
  t.equal(await mover.drained(), true, 'the inbox empties');
  for (const event of events) {
    const job = await mover.queue(queueNames[event.family]).getJob(event.id);
    t.equal(job?.name, event.type, `${event.family}: job named by the event type`);
    t.same(job?.data, event, `${event.family}: the envelope is the job data`);
    t.match(job?.opts, { attempts: 3, backoff: { type: 'fixed', delay: 10 }, removeOnFail: false });
  }
  t.same(await acceptor.enqueue(events[0]!), { duplicate: true, spooled: false }, 'a repeat is still recognised after the move');
  t.equal(await mover.drained(), true);
  t.equal((await mover.queue('gp-events').getJobCounts('waiting')).waiting, 2, 'and not stored again');
});

t.test('the same bytes on two hooks before any move become two jobs', async (t) => {
  const prefix = uniquePrefix();
  const acceptor = await eventQueue(t, prefix, false);
  const first = envelopeOf('gp', 'default', '{"same":"bytes"}');
  const second = envelopeOf('gp', 'other', '{"same":"bytes"}');
  await acceptor.enqueue(first);
  await acceptor.enqueue(second);
  const mover = await eventQueue(t, prefix, true);
  await mover.drained();
  const jobs = await mover.queue('gp-events').getJobs(['wait']);
  t.same(jobs.map((job) => job.data.hook).sort(), ['default', 'other']);
  t.ok(
    jobs.some((job) => job.id === first.id),
    'the first keeps the event id',
  );
  t.ok(
    jobs.some((job) => job.id!.startsWith(`${first.id}-other-`)),
    'the second gets an id of its own',
  );
});

t.test('an idle mover drains the inbox in large batches; each job holds the accepted JSON byte for byte', async (t) => {
  const prefix = uniquePrefix();
  const acceptor = await eventQueue(t, prefix, false);
  const events = Array.from({ length: 50 }, () => envelopeOf('gp'));
  for (const event of events) await acceptor.enqueue(event);

  const reads: number[] = [];
  const raw = new Redis(redis.url);
  const monitor = await raw.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args[0]?.toLowerCase() === 'xreadgroup' && args.includes(`${prefix}:inbox`)) reads.push(Number(args[args.indexOf('COUNT') + 1]));
  });
  const connection = createProducerConnection(redis.url);
  const queue = new Queue('gp-events', { connection, prefix });
  const mover = new InboxMover({
    connection,
    inbox: `${prefix}:inbox`,
    queueOf: () => queue,
    jobOptions: {},
    batchSize: 5,
    drainBatchSize: 20,
  });
  t.teardown(async () => {
    await mover.close();
    await queue.close();
    connection.disconnect();
    monitor.disconnect();
    raw.disconnect();
  });
  mover.start();
  await waitFor('the inbox moved', async () => ((await raw.xlen(`${prefix}:inbox`)) === 0 ? true : undefined));
  t.equal(reads[0], 5, 'the first read takes a small batch');
  t.ok(reads.includes(20), `later reads, with nothing else running, take drainBatchSize: ${reads.join(' ')}`);
  for (const event of events) {
    t.equal(await raw.hget(`${prefix}:gp-events:${event.id}`, 'data'), JSON.stringify(event), 'the job data is the accepted JSON');
  }
});

t.test('entries read by a mover that died are taken over; entries of an unknown queue are left alone', async (t) => {
  const prefix = uniquePrefix();
  const acceptor = await eventQueue(t, prefix, false);
  const event = envelopeOf('feature');
  await acceptor.enqueue(event);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  const inbox = `${prefix}:inbox`;
  await raw.xadd(inbox, '*', 'queue', 'future-events', 'name', 'x', 'id', 'x', 'data', '{}');
  // A mover reads both entries and dies before moving them.
  await raw.xgroup('CREATE', inbox, 'movers', '0', 'MKSTREAM');
  const read = (await raw.xreadgroup('GROUP', 'movers', 'dead-mover', 'COUNT', 10, 'STREAMS', inbox, '>')) as [string, unknown[]][];
  t.equal(read[0]![1].length, 2);

  const connection = createProducerConnection(redis.url);
  const queue = new Queue('feature-events', { connection, prefix });
  const warnings: unknown[] = [];
  const mover = new InboxMover({
    connection,
    inbox,
    queueOf: (name) => (name === 'feature-events' ? queue : undefined),
    jobOptions: {},
    reclaimAfterMs: 200,
    blockMs: 50,
    log: { warn: (obj: unknown) => warnings.push(obj), error: (obj: unknown) => t.fail(`error logged: ${JSON.stringify(obj)}`) },
  });
  mover.start();
  t.teardown(async () => {
    await mover.close();
    await queue.close();
    connection.disconnect();
  });
  const job = await waitFor('the job', async () => queue.getJob(event.id));
  t.same(job.data, event);
  t.equal(await raw.xlen(inbox), 1, 'the unknown entry stays for a mover that knows its queue');
  t.match(warnings, [{ queue: 'future-events' }], JSON.stringify(warnings));
  const [pending] = (await raw.xpending(inbox, 'movers')) as [number];
  t.equal(pending, 1, 'only the unknown entry is still pending');
});

t.test('the mover keeps going after Redis restarts, recreating its group', async (t) => {
  const own = await startRedis(t);
  const prefix = uniquePrefix();
  const connection = createProducerConnection(own.url);
  const queue = new EventQueue({
    connection,
    prefix,
    retry,
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  await queue.ready();
  t.teardown(async () => {
    await queue.close(0);
    connection.disconnect();
  });
  await queue.enqueue(envelopeOf('gp'));
  t.equal(await queue.drained(), true);
  await own.kill();
  await own.start();
  // The restarted server kept nothing (no AOF): stream and group are gone.
  const after = envelopeOf('gp');
  await waitFor('Redis back', async () => connection.status === 'ready' || undefined);
  await waitFor('accepted again', async () =>
    queue.enqueue(after).then(
      () => true,
      () => undefined,
    ),
  );
  await waitFor('moved', async () => queue.queue('gp-events').getJob(after.id));
  t.equal(await queue.inboxLength(), 0);
});

t.test('a job whose script fails inside the transaction is written back to the inbox, not lost', async (t) => {
  const prefix = uniquePrefix();
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  // BullMQ's add fails on a wait list that is not a list.
  await raw.set(`${prefix}:gp-events:wait`, 'not a list');
  const errors: unknown[] = [];
  const connection = createProducerConnection(redis.url);
  const queue = new EventQueue({
    connection,
    prefix,
    retry,
    log: { info: () => undefined, warn: () => undefined, error: (obj: unknown) => errors.push(obj) },
  });
  await queue.ready();
  t.teardown(async () => {
    await queue.close(0);
    connection.disconnect();
  });
  const event = envelopeOf('gp');
  t.same(await queue.enqueue(event), { duplicate: false, spooled: false });
  await waitFor('the failed move', async () => errors.length > 0 || undefined);
  t.match(errors[0], { err: { message: /WRONGTYPE/ } }, 'the failure is logged');
  await raw.del(`${prefix}:gp-events:wait`);
  const waiting = await waitFor('moved once the queue is sound again', async () => {
    const jobs = await queue.queue('gp-events').getJobs(['wait']);
    return jobs.length > 0 ? jobs : undefined;
  });
  t.equal(waiting.length, 1, 'one job waits');
  t.same(waiting[0]!.data, event, 'with the event');
  t.match(waiting[0]!.id, new RegExp(`^${event.id}~`), 'under a job id of its own');
});
