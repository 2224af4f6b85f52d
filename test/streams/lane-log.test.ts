import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { natsReader } from '../../harness/faults/stream-readers.js';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { layerFieldsField } from '../../src/changes/layer-fields.js';
import { eventLogKey, fanoutKey, layerFieldsKey, streamLaneGroup, streamLaneHeldKey } from '../../src/redis/keys.js';
import { relayQueueName } from '../../src/relay/relay-queues.js';
import { readRelayStatus } from '../../src/relay/relay-status.js';
import { createNatsPublisher } from '../../src/streams/nats-publisher.js';
import { STREAM_WINDOW } from '../../src/streams/stream-worker.js';
import { fanOut } from '../helpers/fanout.js';
import { startNats } from '../helpers/nats.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import {
  appendToLog,
  burstEvent,
  featuresOutOfOrder,
  ordersByFeature,
  startStreamPipeline,
  streamRoute,
} from '../helpers/stream-pipeline.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

/** Appends one event to the log under an id of its own millisecond, `ms` (the log is trimmed by the millisecond). */
async function appendAt(client: Redis, prefix: string, event: ChangeEvent, ms: number): Promise<string> {
  return (await client.xadd(eventLogKey(prefix), `${ms}-0`, 'j', event.id, 'd', JSON.stringify(event)))!;
}

t.test(
  "the fan-out makes a stream lane's group at its cursor, keeps every entry the lane has not finished, and relay status counts them",
  async (t) => {
    const prefix = uniquePrefix();
    const client = new Redis(redis.url);
    t.teardown(() => client.disconnect());
    const events = Array.from({ length: 7 }, (_, n) => burstEvent(n, 7, 'g'));
    let ms = Date.now();
    const at = (): number => (ms += 1);
    // Three entries handed on before the lane's route was configured: not its events.
    const first = fanOut(t, redis.url, prefix, { retentionMs: 0, trimIntervalMs: 0 });
    const before: string[] = [];
    for (const event of events.slice(0, 3)) before.push(await appendAt(client, prefix, event, at()));
    await waitFor('the cursor past the first three', async () => (await client.hget(fanoutKey(prefix), 'cursor')) === before[2]);
    await first.close();
    // Two stored while no fan-out runs: the route's, once it is configured.
    const after = [await appendAt(client, prefix, events[3]!, at()), await appendAt(client, prefix, events[4]!, at())];
    const group = streamLaneGroup('lane');
    fanOut(t, redis.url, prefix, { readers: [{ name: 'relay:lane', group }], retentionMs: 0, trimIntervalMs: 0 });
    await waitFor('the cursor past them', async () => (await client.hget(fanoutKey(prefix), 'cursor')) === after[1]);
    // The log is trimmed up to a position, the entry there kept: the group's is the third entry.
    await waitFor(
      'the first two trimmed',
      async () => (await client.xrange(eventLogKey(prefix), '-', '+', 'COUNT', 1))[0]?.[0] === before[2],
      {
        timeoutMs: 10_000,
      },
    );
    // More turns of the fan-out, each trimming what no one holds (retention 0): the turn that handed the first of two
    // later entries on, its trim included, is over once the cursor passed the second.
    const later = [await appendAt(client, prefix, events[5]!, at())];
    await waitFor('the cursor past a later entry', async () => (await client.hget(fanoutKey(prefix), 'cursor')) === later[0]);
    later.push(await appendAt(client, prefix, events[6]!, at()));
    await waitFor('the cursor past another', async () => (await client.hget(fanoutKey(prefix), 'cursor')) === later[1]);
    t.same(
      (await client.xrange(eventLogKey(prefix), '-', '+')).map(([id]) => id),
      [before[2], ...after, ...later],
      'the entries the lane has not read are kept, past the retention',
    );
    const status = await readRelayStatus(client, prefix, [streamRoute('nats', 'nats://127.0.0.1:1', { name: 'lane' })]);
    t.equal(status.routes[0]!.pending, 4, "relay status: the lane's unread entries pending");
    const read = (await client.xreadgroup('GROUP', group, 'lane', 'STREAMS', eventLogKey(prefix), '>')) as [string, [string, string[]][]][];
    t.same(
      read[0]![1].map(([id]) => id),
      [...after, ...later],
      'the group reads from the cursor at which it was made: the entries stored after it, not before',
    );
  },
);

t.test("events an earlier version handed to the route's queue are published before those of the log, each feature in order", async (t) => {
  const nats = await startNats(t);
  const stream = 'UPGRADE';
  const route = streamRoute('nats', nats.url, { stream });
  const pipeline = await startStreamPipeline(t, redis, [route]);
  const events = Array.from({ length: 12 }, (_, n) => burstEvent(n, 2, 'u'));
  // The queue as an earlier version's fan-out left it: the first half of each feature's events waiting.
  const queue = new Queue(relayQueueName(route.name), { connection: pipeline.redis, prefix: pipeline.prefix });
  t.teardown(() => queue.close());
  for (const event of events.slice(0, 6)) await queue.add(event.type, event, { jobId: event.id, removeOnComplete: true });
  const reader = await natsReader(nats.url, stream);
  t.teardown(() => reader.close());
  await pipeline.addReceiver();
  await appendToLog(pipeline.redis, pipeline.prefix, events.slice(6));
  await waitFor('12 messages', async () => (await reader.stored()) >= 12, { timeoutMs: 30_000 });
  const messages = await reader.readAll();
  t.same(messages.map(({ id }) => id).sort(), events.map(({ id }) => id).sort(), 'every event once');
  t.same(featuresOutOfOrder(ordersByFeature(messages.map(({ body }) => body as ChangeEvent))), [], 'each feature in order');
  t.equal(await queue.count(), 0, 'the queue emptied');
});

t.test(
  "a lane takes over what a dead holder left: it waits out the holder's word, then publishes its read entries first, each feature in order",
  async (t) => {
    const nats = await startNats(t);
    const stream = 'TAKEOVER';
    const route = streamRoute('nats', nats.url, { stream });
    let firstPublishedAt: number | undefined;
    const pipeline = await startStreamPipeline(t, redis, [route], {
      onOutcome: (_route, outcome) => {
        if (outcome.delivered) firstPublishedAt ??= Date.now();
      },
    });
    const events = Array.from({ length: 12 }, (_, n) => burstEvent(n, 3, 'd'));
    await appendToLog(pipeline.redis, pipeline.prefix, events.slice(0, 10));
    // A holder that read six entries and died: they are pending in the group, its word alive for 1.5 s more.
    const group = streamLaneGroup(route.name);
    await pipeline.redis.xgroup('CREATE', eventLogKey(pipeline.prefix), group, '0');
    await pipeline.redis.xreadgroup('GROUP', group, 'lane', 'COUNT', 6, 'STREAMS', eventLogKey(pipeline.prefix), '>');
    await pipeline.redis.set(streamLaneHeldKey(pipeline.prefix, route.name), 'a-dead-holder', 'PX', 1500);
    const wordLapsesAt = Date.now() + 1500;
    await appendToLog(pipeline.redis, pipeline.prefix, events.slice(10));
    const reader = await natsReader(nats.url, stream);
    t.teardown(() => reader.close());
    await pipeline.addReceiver();
    await waitFor('12 messages', async () => (await reader.stored()) >= 12, { timeoutMs: 30_000 });
    const messages = await reader.readAll();
    t.same(messages.map(({ id }) => id).sort(), events.map(({ id }) => id).sort(), 'every event once, the six read before among them');
    t.same(featuresOutOfOrder(ordersByFeature(messages.map(({ body }) => body as ChangeEvent))), [], 'each feature in order');
    t.ok(firstPublishedAt! >= wordLapsesAt, 'nothing published while the dead holder’s word was alive');
    // The lane finishes an entry once the broker acknowledged it, which may come after the reader sees the message.
    const pending = () => pipeline.redis.xpending(eventLogKey(pipeline.prefix), group);
    await waitFor('no entry pending', async () => ((await pending()) as unknown[])[0] === 0);
    t.same(await pending(), [0, null, null, null], 'every entry finished');
  },
);

t.test(
  'entries a lane read in a round that failed (Redis refused the layers a where filter reads) are published once it works again',
  async (t) => {
    const nats = await startNats(t);
    const stream = 'RETRIED';
    const route = streamRoute('nats', nats.url, { stream, where: "status = 'Open'" });
    const pipeline = await startStreamPipeline(t, redis, [route]);
    const events = Array.from({ length: 10 }, (_, n) => burstEvent(n, 2, 'r'));
    // The layers' hash as a string: every read of it fails, after the lane read its entries.
    await pipeline.redis.set(layerFieldsKey(pipeline.prefix), 'not a hash');
    await pipeline.addReceiver();
    await appendToLog(pipeline.redis, pipeline.prefix, events);
    const group = streamLaneGroup(route.name);
    await waitFor('entries read and not published', async () => {
      const [pending] = (await pipeline.redis.xpending(eventLogKey(pipeline.prefix), group).catch(() => [0])) as [number];
      return pending > 0;
    });
    await pipeline.redis.del(layerFieldsKey(pipeline.prefix));
    const fields = [
      { name: 'objectid', type: 'esriFieldTypeOID' },
      { name: 'status', type: 'esriFieldTypeString' },
      { name: 'seq', type: 'esriFieldTypeInteger' },
    ];
    await pipeline.redis.hset(layerFieldsKey(pipeline.prefix), layerFieldsField(events[0]!), JSON.stringify(fields));
    const reader = await natsReader(nats.url, stream);
    t.teardown(() => reader.close());
    await waitFor('10 messages', async () => (await reader.stored()) >= 10, { timeoutMs: 30_000 });
    const messages = await reader.readAll();
    t.same(messages.map(({ id }) => id).sort(), events.map(({ id }) => id).sort(), 'every event once');
    t.same(featuresOutOfOrder(ordersByFeature(messages.map(({ body }) => body as ChangeEvent))), [], 'each feature in order');
  },
);

/**
 * A lane publishing `events` (stored at once) into the NATS stream `stream` of a broker that answers a publish only
 * when the test lets it: `held`, the publishes it has not answered, in the order they came (call one to answer it);
 * `most()`, the most publishes under way at once.
 */
async function heldBroker(t: Test, stream: string, events: readonly ChangeEvent[]) {
  const nats = await startNats(t);
  const route = streamRoute('nats', nats.url, { stream });
  const held: (() => void)[] = [];
  let underWay = 0;
  let most = 0;
  const pipeline = await startStreamPipeline(t, redis, [route], {
    publisherOf: (config, logger) => {
      const publisher = createNatsPublisher(config, logger);
      return {
        async publish(message) {
          underWay += 1;
          most = Math.max(most, underWay);
          await new Promise<void>((resolve) => held.push(resolve));
          await publisher.publish(message);
          underWay -= 1;
        },
        close: () => publisher.close(),
      };
    },
  });
  await appendToLog(pipeline.redis, pipeline.prefix, events);
  const reader = await natsReader(nats.url, stream);
  t.teardown(() => reader.close());
  await pipeline.addReceiver();
  return { held, reader, most: () => most };
}

t.test('events of one feature held at once are published one after the other, though an earlier publish takes longer', async (t) => {
  const events = Array.from({ length: 40 }, (_, n) => burstEvent(n, 4, 'c'));
  const { held, reader } = await heldBroker(t, 'CHAINED', events);
  // The broker answers the latest publish it holds first: only waiting for the one before keeps each feature's order.
  for (let answered = 0; answered < events.length; answered += 1) {
    await waitFor('a publish held', () => held.length > 0, { timeoutMs: 30_000 });
    held.pop()!();
  }
  await waitFor('40 messages', async () => (await reader.stored()) >= 40, { timeoutMs: 30_000 });
  const messages = await reader.readAll();
  t.equal(messages.length, 40, 'every event once');
  t.same(featuresOutOfOrder(ordersByFeature(messages.map(({ body }) => body as ChangeEvent))), [], 'each feature in order');
});

t.test('a lane holds at most its window of events at once: it reads more only as publishes finish', async (t) => {
  const events = Array.from({ length: STREAM_WINDOW * 2 + 50 }, (_, n) => burstEvent(n, STREAM_WINDOW * 4, 'w'));
  const { held, reader, most } = await heldBroker(t, 'WINDOW', events);
  // Each time the lane holds all it may (the window, or what is left), 16 publishes are answered: a lane that read
  // on regardless would hold the whole log long before the last is answered.
  for (let answered = 0; answered < events.length; answered += 16) {
    const holds = Math.min(STREAM_WINDOW, events.length - answered);
    await waitFor(`${holds} publishes held`, () => held.length >= holds, { timeoutMs: 30_000 });
    for (const answer of held.splice(0, 16)) answer();
  }
  await waitFor(`${events.length} messages`, async () => (await reader.stored()) >= events.length, { timeoutMs: 60_000 });
  t.ok(most() <= STREAM_WINDOW, `at most ${STREAM_WINDOW} held at once (${most()})`);
  t.equal((await reader.readAll()).length, events.length, 'every event once');
});
