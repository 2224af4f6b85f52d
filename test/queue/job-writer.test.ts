import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { monitorRedis } from '../../harness/redis-monitor.js';
import { QueueUnavailableError } from '../../src/errors.js';
import type { Durability } from '../../src/queue/durability.js';
import { EventQueue } from '../../src/queue/event-queue.js';
import { queueNames } from '../../src/queue/names.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import { accepted, envelopeOf } from '../helpers/envelope.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const retry = { attempts: 3, backoff: { type: 'fixed', delayMs: 10, jitter: 0 } } as const;

/** An EventQueue on `prefix` of `url`, closed at teardown. */
async function eventQueue(t: Test, prefix: string, url = redis.url, durability: Durability = 'fast'): Promise<EventQueue> {
  const connection = createProducerConnection(url);
  const queue = new EventQueue({ connection, prefix, retry, durability });
  await queue.ready();
  t.teardown(async () => {
    await queue.close();
    connection.disconnect();
  });
  return queue;
}

t.test('an acknowledged event is already a job with the configured options, its data the stored JSON byte for byte', async (t) => {
  const prefix = uniquePrefix();
  const queue = await eventQueue(t, prefix);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  const events = [envelopeOf('gp'), envelopeOf('feature'), envelopeOf('unknown'), envelopeOf('gp')];
  for (const event of events) t.same(await queue.enqueue(accepted(event)), { duplicate: false, spooled: false });
  for (const event of events) {
    const job = await queue.queue(queueNames[event.family]).getJob(event.id);
    t.equal(job?.name, event.type, `${event.family}: job named by the event type`);
    t.match(job?.opts, { attempts: 3, backoff: { type: 'fixed', delay: 10 }, removeOnFail: false });
    t.equal(await raw.hget(`${prefix}:${queueNames[event.family]}:${event.id}`, 'data'), JSON.stringify(event));
  }
  t.same(await queue.enqueue(accepted(events[0]!)), { duplicate: true, spooled: false }, 'a repeat on the same hook is recognised');
  t.equal((await queue.queue('gp-events').getJobCounts('waiting')).waiting, 2, 'and not stored again');
});

t.test('the same bytes on two hooks become two jobs, the second under an id of its own', async (t) => {
  const queue = await eventQueue(t, uniquePrefix());
  const first = envelopeOf('gp', 'default', '{"same":"bytes"}');
  const second = envelopeOf('gp', 'other', '{"same":"bytes"}');
  const answers = await Promise.all([queue.enqueue(accepted(first)), queue.enqueue(accepted(second))]);
  t.same(answers, [
    { duplicate: false, spooled: false },
    { duplicate: false, spooled: false },
  ]);
  const jobs = await queue.queue('gp-events').getJobs(['wait']);
  t.same(jobs.map((job) => (job.data as { hook: string }).hook).sort(), ['default', 'other']);
  t.ok(
    jobs.some((job) => job.id === first.id),
    'the first keeps the event id',
  );
  t.ok(
    jobs.some((job) => job.id!.startsWith(`${first.id}-other-`)),
    'the second gets an id of its own',
  );
});

/** The accept script's calls on `url` for `prefix`, as MONITOR sees them (each the list of its arguments). */
async function scriptCalls(t: Test, prefix: string, url = redis.url): Promise<(readonly string[])[]> {
  const calls: (readonly string[])[] = [];
  const monitor = await monitorRedis(url, ({ args }) => {
    // The script's own call (EVALSHA, or EVAL when first loaded), not the commands it runs: it names every queue.
    if (args.includes(`${prefix}:unknown-events:`)) calls.push(args);
  });
  t.teardown(() => monitor.close());
  return calls;
}

/** How many events of type `gp.job.failed` each call wrote. */
const eventsPerCall = (calls: (readonly string[])[]): number[] => calls.map((args) => args.filter((arg) => arg === 'gp.job.failed').length);

t.test('the first event is written at once; those accepted meanwhile share calls of 4 to 8, in order', async (t) => {
  const prefix = uniquePrefix();
  const queue = await eventQueue(t, prefix);
  const calls = await scriptCalls(t, prefix);
  const events = Array.from({ length: 40 }, () => ({ ...envelopeOf('gp'), service: { folderName: 'Tools', serviceName: 'Buffer' } }));
  await Promise.all(events.map((event) => queue.enqueue(accepted(event))));
  await waitFor('the calls seen by MONITOR', async () => calls.length >= 7 || undefined);
  t.same(
    calls.map((args) => args.filter((arg) => /^delivery.+Tools\/Buffer\.GPServer$/.test(arg)).length),
    [1, 1, 1, 1, 1, 1, 1],
    "the service's activity is sent once per call (all of a call's activities get its time)",
  );
  t.same(
    eventsPerCall(calls),
    [1, 4, 8, 8, 8, 8, 3],
    'the first alone, a second call once 4 wait, full batches while two are in flight, the 3 left once none is',
  );
  const waiting = await queue.queue('gp-events').getJobs(['wait']);
  t.same(
    waiting.map((job) => job.id).reverse(),
    events.map((event) => event.id),
    'queued in the order they were accepted',
  );
});

t.test('under strict durability a call holds up to 16 events (each turn of Redis is an fsync there)', async (t) => {
  const strict = await startRedis(t, { appendOnly: true, appendFsync: 'always' });
  const prefix = uniquePrefix();
  const queue = await eventQueue(t, prefix, strict.url, 'strict');
  const calls = await scriptCalls(t, prefix, strict.url);
  await Promise.all(Array.from({ length: 40 }, () => queue.enqueue(accepted(envelopeOf('gp')))));
  await waitFor('the calls seen by MONITOR', async () => calls.length >= 5 || undefined);
  t.same(eventsPerCall(calls), [1, 4, 16, 16, 3]);
});

t.test('a batch Redis fails midway is refused as a whole; the retried deliveries are all jobs, none a false repeat', async (t) => {
  const prefix = uniquePrefix();
  const queue = await eventQueue(t, prefix);
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  // BullMQ's add fails on a wait list that is not a list, after the gp event before it was written.
  await raw.set(`${prefix}:feature-events:wait`, 'not a list');
  const events = [envelopeOf('gp'), envelopeOf('feature'), envelopeOf('gp')];
  // Written while another call is in flight, the three share the next call.
  const inFlight = queue.enqueue(accepted(envelopeOf('unknown')));
  const answers = await Promise.allSettled(events.map((event) => queue.enqueue(accepted(event))));
  t.same(await inFlight, { duplicate: false, spooled: false }, 'the call before is not affected');
  for (const answer of answers) {
    t.equal(answer.status, 'rejected');
    t.type((answer as PromiseRejectedResult).reason, QueueUnavailableError);
    t.match((answer as PromiseRejectedResult).reason, { message: /WRONGTYPE/ });
  }
  await raw.del(`${prefix}:feature-events:wait`);
  const retried = await Promise.all(events.map((event) => queue.enqueue(accepted(event))));
  t.same(
    retried.map((answer) => answer.duplicate),
    [true, false, false],
    'the event written before the failure is a repeat; the failed one and the rest are new',
  );
  for (const event of events) {
    const jobs = await queue.queue(queueNames[event.family]).getJobs(['wait']);
    t.ok(
      jobs.some((job) => (job.data as { id: string }).id === event.id),
      `${event.family} event ${event.id.slice(0, 8)} waits as a job`,
    );
  }
});

t.test('accepting goes on after Redis restarts (the script is loaded again)', async (t) => {
  const own = await startRedis(t);
  const queue = await eventQueue(t, uniquePrefix(), own.url);
  await queue.enqueue(accepted(envelopeOf('gp')));
  await own.kill();
  await own.start();
  const after = envelopeOf('gp');
  const answer = await waitFor('accepted again', async () => queue.enqueue(accepted(after)).catch(() => undefined));
  t.same(answer, { duplicate: false, spooled: false });
  t.ok(await queue.queue('gp-events').getJob(after.id));
});
