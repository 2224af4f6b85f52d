import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { EventFamily, StoredEvent } from '../../src/events/envelope.js';
import type { Destination } from '../../src/fanout/destination.js';
import { readEventLog, type LogEntry } from '../../src/fanout/event-log.js';
import { readFanoutLagMs } from '../../src/fanout/fanout-lag.js';
import { FanoutScript } from '../../src/fanout/fanout-script.js';
import { logIdMs } from '../../src/fanout/log-id.js';
import { routeMatcher } from '../../src/fanout/route-match.js';
import type { EventQueue } from '../../src/queue/event-queue.js';
import { eventLogKey, fanoutKey, fanoutLeaseKey } from '../../src/redis/keys.js';
import { accepted, envelopeOf } from '../helpers/envelope.js';
import { startEventQueue } from '../helpers/event-queue.js';
import { fanOut } from '../helpers/fanout.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

/** A connection of the test's own (the fan-out's kind: it waits for Redis), closed at teardown. */
function connect(t: Test): Redis {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => connection.disconnect());
  return connection;
}

/** A destination of queue `queue` taking the event types `types`. */
const destination = (queue: string, types: string[], extra: Partial<Destination> = {}): Destination => ({
  name: `test:${queue}`,
  queue,
  matches: routeMatcher({ types }),
  jobOptions: { removeOnComplete: false },
  ...extra,
});

/** A stored event of `family` and `type` (distinct bytes). */
function eventOf(family: EventFamily, type: string): StoredEvent {
  return { ...envelopeOf(family), type, types: [type] };
}

/** Every log entry's id and job id, in the log's order. */
async function logOf(connection: Redis, prefix: string): Promise<{ id: string; jobId: string; type: string }[]> {
  const entries = await connection.xrange(eventLogKey(prefix), '-', '+');
  return entries.map(([id, fields]) => {
    const at = (name: string): string => fields[fields.indexOf(name) + 1]!;
    return { id, jobId: at('j'), type: (JSON.parse(at('d')) as StoredEvent).type };
  });
}

/** The job ids in a destination queue's wait list, oldest first (the order its workers take them). */
async function waiting(connection: Redis, prefix: string, queue: string): Promise<string[]> {
  return (await connection.lrange(`${prefix}:${queue}:wait`, 0, -1)).reverse();
}

/** Waits for the fan-out's cursor to reach `id`. */
const cursorAt = (connection: Redis, prefix: string, id: string): Promise<true> =>
  waitFor(`the cursor at ${id}`, async () => (await connection.hget(fanoutKey(prefix), 'cursor')) === id);

t.test('two fan-outs racing on one prefix hand each entry to each destination once, in log order', async (t) => {
  // Each receiver's fan-out as it would run, except that after every hand-over the lease is taken from its holder for
  // a few ms (as if it had lapsed): then either may take it, in no set order. Which one does is a race: until both
  // handed entries over in one try (at most five), the race is run again on a fresh prefix; every try must hand each
  // entry to each destination once, in log order.
  const race = async (attempt: number): Promise<number[]> => {
    const { eventQueue, prefix } = await startEventQueue(t, redis);
    const connection = connect(t);
    const types = ['gp.job.succeeded', 'gp.job.failed', 'feature.FeaturesCreated'];
    for (let i = 0; i < 48; i += 1) {
      const type = types[i % types.length]!;
      await eventQueue.enqueue(accepted(eventOf(type.startsWith('gp.') ? 'gp' : 'feature', type)));
    }
    const leaseKey = fanoutLeaseKey(prefix);
    const handedBy = [0, 0];
    const routes = (): Destination[] => [destination('gp-only', ['gp.*']), destination('all', ['gp.*', 'feature.*'])];
    const fanouts = [0, 1].map((index) =>
      fanOut(t, redis.url, prefix, {
        routes: routes(),
        batch: 3,
        leaseMs: 20,
        onHandOver: () => {
          handedBy[index]! += 1;
          void connection.set(leaseKey, 'lapsed', 'PX', 15);
        },
      }),
    );
    const log = await logOf(connection, prefix);
    t.equal(log.length, 48);
    await cursorAt(connection, prefix, log.at(-1)!.id);
    await Promise.all(fanouts.map((fanout) => fanout.close()));
    t.same(
      await waiting(connection, prefix, 'all'),
      log.map(({ jobId }) => jobId),
      `try ${attempt}: every entry once, in log order`,
    );
    t.same(
      await waiting(connection, prefix, 'gp-only'),
      log.filter(({ type }) => type.startsWith('gp.')).map(({ jobId }) => jobId),
      `try ${attempt}: the GP entries once, in log order`,
    );
    const first = log[0]!;
    const job = await connection.hmget(`${prefix}:all:${first.jobId}`, 'name', 'data');
    t.equal(job[0], first.type, 'the job is named after the event type');
    t.equal((JSON.parse(job[1]!) as StoredEvent).id, first.jobId, 'and holds the event');
    return handedBy;
  };
  let attempt = 1;
  let handedBy = await race(attempt);
  while (!handedBy.every((count) => count > 0) && attempt < 5) {
    attempt += 1;
    handedBy = await race(attempt);
  }
  t.ok(
    handedBy.every((count) => count > 0),
    `both fan-outs handed entries over (${handedBy.join(', ')}, try ${attempt})`,
  );
});

t.test('a hand-over from a cursor or version that moved meanwhile adds nothing and moves nothing', async (t) => {
  const { eventQueue, prefix } = await startEventQueue(t, redis);
  const connection = connect(t);
  for (let i = 0; i < 3; i += 1) await eventQueue.enqueue(accepted(eventOf('gp', 'gp.job.failed')));
  const { entries, lastId } = await readEventLog(connection, eventLogKey(prefix), { start: '-', count: 10 }, () => t.fail('an event'));
  const script = new FanoutScript(connection, prefix);
  t.teardown(() => script.close());
  const target = destination('once', ['gp.*']);
  const request = { field: 'cursor', expected: '0-0', next: lastId!, version: '0', entries, taken: new Map([[target, [0, 1, 2]]]) };
  await connection.hset(fanoutKey(prefix), 'cursor', '0-0', 'version', '0');
  t.equal(await script.handOver(request), 'done');
  t.equal(await connection.hget(fanoutKey(prefix), 'cursor'), lastId);
  const handed = entries.map(({ jobId }) => jobId);
  t.same(await waiting(connection, prefix, 'once'), handed);

  // The jobs were handled and removed since; a receiver that read the cursor before this hand-over comes late.
  await connection.del(`${prefix}:once:wait`, ...handed.map((jobId) => `${prefix}:once:${jobId}`));
  t.equal(await script.handOver(request), 'moved', 'the cursor moved meanwhile');
  t.same(await waiting(connection, prefix, 'once'), [], 'nothing handed over again');
  t.equal(await connection.hget(fanoutKey(prefix), 'cursor'), lastId, 'the cursor is not taken back');

  await connection.hset(fanoutKey(prefix), 'cursor', '0-0');
  await connection.hincrby(fanoutKey(prefix), 'version', 1);
  t.equal(await script.handOver(request), 'changed', 'the subscriptions changed meanwhile');
  t.same(await waiting(connection, prefix, 'once'), [], 'nothing handed over');
  t.equal(await connection.hget(fanoutKey(prefix), 'cursor'), '0-0', 'the cursor unmoved');
});

t.test('a destination gets one job per event id: none for an id its queue holds, one for an id a hand-over takes twice', async (t) => {
  const { eventQueue, prefix } = await startEventQueue(t, redis);
  const connection = connect(t);
  for (let i = 0; i < 3; i += 1) await eventQueue.enqueue(accepted(eventOf('gp', 'gp.job.failed')));
  const { entries } = await readEventLog(connection, eventLogKey(prefix), { start: '-', count: 10 }, () => t.fail('an event'));
  const [first, second, third] = entries as [LogEntry, LogEntry, LogEntry];
  const script = new FanoutScript(connection, prefix);
  t.teardown(() => script.close());
  const target = destination('once', ['gp.*']);
  await connection.hset(fanoutKey(prefix), 'cursor', '0-0', 'version', '0');
  const handOver = (expected: string, next: string, handed: LogEntry[]) =>
    script.handOver({
      field: 'cursor',
      expected,
      next,
      version: '0',
      entries: handed,
      taken: new Map([[target, handed.map((_, i) => i)]]),
    });

  // The first twice, as a log holding an event twice would hand it; then again (its job is in the queue), with the others.
  t.equal(await handOver('0-0', first.id, [first, { ...first, id: `${logIdMs(first.id) + 1}-0` }]), 'done');
  t.equal(await handOver(first.id, third.id, [first, second, third]), 'done');
  t.same(await waiting(connection, prefix, 'once'), [first.jobId, second.jobId, third.jobId], 'each id once, in order');
  t.equal(await connection.get(`${prefix}:once:id`), '3', 'three jobs counted');
});

t.test('a destination with `after` gets only the entries after it', async (t) => {
  const { eventQueue, prefix } = await startEventQueue(t, redis);
  const connection = connect(t);
  for (let i = 0; i < 3; i += 1) await eventQueue.enqueue(accepted(eventOf('gp', 'gp.job.failed')));
  const after = (await logOf(connection, prefix)).at(-1)!.id;
  for (let i = 0; i < 3; i += 1) await eventQueue.enqueue(accepted(eventOf('gp', 'gp.job.failed')));
  const log = await logOf(connection, prefix);
  fanOut(t, redis.url, prefix, { routes: [destination('later', ['gp.*'], { after }), destination('every', ['gp.*'])] });
  await cursorAt(connection, prefix, log.at(-1)!.id);
  t.same(
    await waiting(connection, prefix, 'later'),
    log.slice(3).map(({ jobId }) => jobId),
    'the three written after',
  );
  t.same(
    await waiting(connection, prefix, 'every'),
    log.map(({ jobId }) => jobId),
    'beside it, a destination without gets all six',
  );
});

t.test('trimming keeps the entries after the cursor, whatever the retention, until they are handed over', async (t) => {
  const prefix = uniquePrefix();
  const connection = connect(t);
  const logKey = eventLogKey(prefix);
  // Six entries written long ago (far past a retention of 0), three of them handed over already.
  const ids = ['1000-0', '2000-0', '3000-0', '4000-0', '5000-0', '6000-0'];
  for (const id of ids) {
    const event = eventOf('gp', 'gp.job.failed');
    await connection.xadd(logKey, id, 'j', `job-${id}`, 'd', JSON.stringify(event));
  }
  await connection.hset(fanoutKey(prefix), 'cursor', '3000-0', 'version', '0');
  // The subscriptions change under every hand-over while `stalled`: the fan-out turns (and trims) but hands nothing over.
  let stalled = true;
  const subscriptions = async (): Promise<Destination[]> => {
    if (stalled) await connection.hincrby(fanoutKey(prefix), 'version', 1);
    return [];
  };
  // Each turn trims (no interval), and each turn while stalled raises the version once.
  fanOut(t, redis.url, prefix, { routes: [destination('keep', ['gp.*'])], retentionMs: 0, trimIntervalMs: 0, subscriptions });
  const stream = async (): Promise<string[]> => (await connection.xrange(logKey, '-', '+')).map(([id]) => id);
  const version = async (): Promise<number> => Number(await connection.hget(fanoutKey(prefix), 'version'));
  await waitFor('the entries before the cursor trimmed', async () => (await stream()).length < ids.length);
  const trimmedAt = await version();
  await waitFor('more turns, each with its trim', async () => (await version()) >= trimmedAt + 3);
  t.same(await stream(), ids.slice(2), 'what every destination had is gone; the cursor and what follows it are kept');
  t.equal(await connection.hget(fanoutKey(prefix), 'cursor'), '3000-0', 'nothing handed over meanwhile');
  t.same(await waiting(connection, prefix, 'keep'), []);

  stalled = false;
  await waitFor('the kept entries handed over', async () => (await connection.hget(fanoutKey(prefix), 'cursor')) === '6000-0', {
    timeoutMs: 3000,
  });
  t.same(await waiting(connection, prefix, 'keep'), ['job-4000-0', 'job-5000-0', 'job-6000-0'], 'the kept entries, handed over');
  await waitFor('the log trimmed up to the cursor', async () => (await stream()).join() === '6000-0');
});

t.test('an entry that is no event is passed over and the loop goes on', async (t) => {
  const prefix = uniquePrefix();
  const connection = connect(t);
  const logKey = eventLogKey(prefix);
  const good = async (): Promise<string> => {
    const event = eventOf('gp', 'gp.job.failed');
    await connection.xadd(logKey, '*', 'j', event.id, 'd', JSON.stringify(event));
    return event.id;
  };
  const expected = [await good()];
  await connection.xadd(logKey, '*', 'hello', 'world');
  await connection.xadd(logKey, '*', 'j', 'no-data');
  await connection.xadd(logKey, '*', 'j', 'not-json', 'd', '{"type":');
  await connection.xadd(logKey, '*', 'j', 'null', 'd', 'null');
  expected.push(await good());
  const { logger, lines } = capturingLogger('error');
  fanOut(t, redis.url, prefix, { routes: [destination('events', ['*'])], logger });
  const last = (await connection.xrevrange(logKey, '+', '-', 'COUNT', 1))[0]![0];
  await cursorAt(connection, prefix, last);
  expected.push(await good());
  await waitFor('the event written after them', async () => (await waiting(connection, prefix, 'events')).length === 3);
  t.same(await waiting(connection, prefix, 'events'), expected, 'the events around them, once each');
  t.equal(lines.filter((line) => line.includes('an entry that is no event, passed over')).length, 4, 'each reported once');
});

// Regression: an entry whose `d` parsed but was no event (`{}`, `5`) threw in the matching, and every turn failed on it.
t.test('an entry whose data is JSON but no event is passed over too', async (t) => {
  const prefix = uniquePrefix();
  const connection = connect(t);
  const logKey = eventLogKey(prefix);
  await connection.xadd(logKey, '*', 'j', 'object', 'd', '{}');
  await connection.xadd(logKey, '*', 'j', 'number', 'd', '5');
  const event = eventOf('gp', 'gp.job.failed');
  await connection.xadd(logKey, '*', 'j', event.id, 'd', JSON.stringify(event));
  fanOut(t, redis.url, prefix, { routes: [destination('events', ['*'])] });
  await waitFor('the event after them', async () => (await waiting(connection, prefix, 'events')).length > 0, { timeoutMs: 2000 });
  t.same(await waiting(connection, prefix, 'events'), [event.id]);
});

t.test('with no destination the cursor moves past the entries, unparsed (an entry that is no event is not even seen)', async (t) => {
  const prefix = uniquePrefix();
  const connection = connect(t);
  const { logger, lines } = capturingLogger('debug');
  await connection.xadd(eventLogKey(prefix), '*', 'j', 'x', 'd', 'not JSON');
  const last = await connection.xadd(eventLogKey(prefix), '*', 'j', 'y', 'd', JSON.stringify(eventOf('gp', 'gp.job.failed')));
  fanOut(t, redis.url, prefix, { routes: [], logger });
  await cursorAt(connection, prefix, last!);
  t.notOk(
    lines.some((line) => line.includes('no event')),
    'nothing parsed',
  );
});

t.test('a hand-over adds at most maxJobsPerCall jobs: entries per call shrink as destinations grow', async (t) => {
  const { eventQueue, prefix } = await startEventQueue(t, redis);
  const connection = connect(t);
  for (let i = 0; i < 12; i += 1) await eventQueue.enqueue(accepted(eventOf('gp', 'gp.job.failed')));
  const sizes: number[] = [];
  const routes = ['a', 'b', 'c', 'd'].map((queue) => destination(queue, ['gp.*']));
  fanOut(t, redis.url, prefix, { routes, maxJobsPerCall: 8, onHandOver: (entries) => void sizes.push(entries) });
  const log = await logOf(connection, prefix);
  await cursorAt(connection, prefix, log.at(-1)!.id);
  // The cursor moves in Redis before the fan-out hears its call's answer: wait for the last hand-over's report too.
  await waitFor('every hand-over reported', () => sizes.reduce((sum, size) => sum + size, 0) === 12);
  t.same(sizes, [2, 2, 2, 2, 2, 2], 'two entries (eight jobs) per call');
  t.equal((await waiting(connection, prefix, 'd')).length, 12, 'every entry handed over');
});

/**
 * A log the fan-out of `prefix` cannot keep up with: two entries, then four more after each hand-over until it first
 * yields. `stored` resolves once those written are in the log.
 */
function outgrownLog(eventQueue: EventQueue, yielded: () => boolean) {
  const enqueue = async (count: number): Promise<void> => {
    await Promise.all(Array.from({ length: count }, () => eventQueue.enqueue(accepted(eventOf('gp', 'gp.job.failed')))));
  };
  let stored = enqueue(2);
  return {
    first: stored,
    onHandOver: (): void => {
      if (!yielded()) stored = stored.then(() => enqueue(4));
    },
    stored: () => stored,
  };
}

t.test(
  'acks first: while the acknowledgements are saturated and the log outgrows the fan-out it yields, and hands everything over once they are not',
  async (t) => {
    const { eventQueue, prefix } = await startEventQueue(t, redis);
    const connection = connect(t);
    let saturated = true;
    let yields = 0;
    const log = outgrownLog(eventQueue, () => yields > 0);
    await log.first;
    fanOut(t, redis.url, prefix, {
      routes: [destination('all', ['gp.*'])],
      batch: 2,
      saturated: () => saturated,
      maxLagMs: 3_600_000,
      onHandOver: log.onHandOver,
      onYield: () => void (yields += 1),
    });
    await waitFor('the fan-out yielding', () => yields >= 2);
    await log.stored();
    const handed = await waiting(connection, prefix, 'all');
    const cursor = await connection.hget(fanoutKey(prefix), 'cursor');
    await waitFor('two more yields', () => yields >= 4);
    t.same(await waiting(connection, prefix, 'all'), handed, 'nothing handed over while saturated');
    t.equal(await connection.hget(fanoutKey(prefix), 'cursor'), cursor, 'the cursor waits');
    const entries = await logOf(connection, prefix);
    t.ok(handed.length < entries.length, `entries left in the log (${entries.length - handed.length} of ${entries.length})`);
    t.ok((await readFanoutLagMs(connection, prefix)) > 0, 'the fan-out lag counts from the oldest entry left in the log');

    saturated = false;
    await cursorAt(connection, prefix, entries.at(-1)!.id);
    t.same(
      await waiting(connection, prefix, 'all'),
      entries.map(({ jobId }) => jobId),
      'every entry once, in log order, once the acknowledgements have room',
    );
  },
);

t.test('acks first, at a pace the fan-out keeps up with: saturated acknowledgements and whole batches make no yield', async (t) => {
  const { eventQueue, prefix } = await startEventQueue(t, redis);
  const connection = connect(t);
  // A burst stored before the fan-out starts: both its reads find a whole batch, but the log does not grow.
  for (let i = 0; i < 4; i += 1) await eventQueue.enqueue(accepted(eventOf('gp', 'gp.job.failed')));
  const log = await logOf(connection, prefix);
  let yields = 0;
  fanOut(t, redis.url, prefix, {
    routes: [destination('all', ['gp.*'])],
    batch: 2,
    saturated: () => true,
    onYield: () => void (yields += 1),
  });
  await cursorAt(connection, prefix, log.at(-1)!.id);
  t.equal(yields, 0, 'no yield');
  t.same(
    await waiting(connection, prefix, 'all'),
    log.map(({ jobId }) => jobId),
  );
});

t.test('acks first has a bound: saturated for good, the fan-out hands each entry over once it is maxLagMs old', async (t) => {
  const { eventQueue, prefix } = await startEventQueue(t, redis);
  const connection = connect(t);
  const maxLagMs = 1000;
  let yieldCursor: Promise<string | null> | undefined;
  const log = outgrownLog(eventQueue, () => yieldCursor !== undefined);
  await log.first;
  fanOut(t, redis.url, prefix, {
    routes: [destination('all', ['gp.*'])],
    batch: 2,
    saturated: () => true,
    maxLagMs,
    onHandOver: log.onHandOver,
    onYield: () => void (yieldCursor ??= connection.hget(fanoutKey(prefix), 'cursor')),
  });
  await waitFor('the fan-out yielding', () => yieldCursor !== undefined);
  await log.stored();
  const entries = await logOf(connection, prefix);
  await cursorAt(connection, prefix, entries.at(-1)!.id);
  t.same(
    await waiting(connection, prefix, 'all'),
    entries.map(({ jobId }) => jobId),
    'every entry once, in log order',
  );
  // The oldest entry left when it first yielded was handed over once it was maxLagMs old, not before.
  const cursor = await yieldCursor;
  const oldest = entries[entries.findIndex(({ id }) => id === cursor) + 1]!;
  const handedAtMs = Number(await connection.hget(`${prefix}:all:${oldest.jobId}`, 'timestamp'));
  t.ok(handedAtMs - logIdMs(oldest.id) >= maxLagMs, `handed over ${handedAtMs - logIdMs(oldest.id)} ms after it was stored`);
});
