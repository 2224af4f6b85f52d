import { Queue } from 'bullmq';
import { connect, type JsMsg, type NatsConnection } from 'nats';
import pino from 'pino';
import t, { type Test } from 'tap';
import { natsReader } from '../../harness/faults/stream-readers.js';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { REPLAY_HEADER } from '../../src/relay/formats/relay-request.js';
import { relayQueueName } from '../../src/relay/relay-queues.js';
import { replayDeadLetters } from '../../src/relay/relay-replay.js';
import { readRelayStatus } from '../../src/relay/relay-status.js';
import { createNatsPublisher } from '../../src/streams/nats-publisher.js';
import { streamMessage, traceparentOf } from '../../src/streams/stream-message.js';
import { startNats, type TestNats } from '../helpers/nats.js';
import { startRedis } from '../helpers/redis.js';
import {
  appendToLog,
  burstEvent,
  featuresOutOfOrder,
  ordersByFeature,
  restartMidBurst,
  startStreamPipeline,
  streamRoute,
} from '../helpers/stream-pipeline.js';
import { waitFor } from '../helpers/wait.js';

// A restart mid-burst under two receivers: longer than tap's default on a loaded machine.
t.setTimeout(3 * 60_000);
const redis = await startRedis(t);
const nats = await startNats(t);

/** A connection of the official client, closed at teardown. */
async function natsClient(t: Test, server: TestNats): Promise<NatsConnection> {
  const connection = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
  t.teardown(() => connection.close());
  return connection;
}

/** How many messages `stream` holds (0 while it does not exist). */
async function storedCount(connection: NatsConnection, stream: string): Promise<number> {
  const manager = await connection.jetstreamManager();
  return (await manager.streams.info(stream)).state.messages;
}

/** Every message of `stream`, in the stream's order, read by an ordered consumer of the official client. */
async function readStream(connection: NatsConnection, stream: string): Promise<JsMsg[]> {
  const total = await storedCount(connection, stream);
  const consumer = await connection.jetstream().consumers.get(stream);
  const messages: JsMsg[] = [];
  const iterator = await consumer.consume();
  for await (const message of iterator) {
    messages.push(message);
    if (messages.length >= total) break;
  }
  return messages;
}

t.test('a nats route publishes each event once, with its id, headers and subject, each feature in order', async (t) => {
  const stream = 'FIRST';
  const route = streamRoute('nats', nats.url, { stream });
  const pipeline = await startStreamPipeline(t, redis, [route]);
  await pipeline.addReceiver();
  const events = Array.from({ length: 300 }, (_, n) => burstEvent(n, 12, 'a'));
  await appendToLog(pipeline.redis, pipeline.prefix, events);
  const client = await natsClient(t, nats);
  await waitFor('300 messages in the stream', async () => (await storedCount(client, stream)) >= 300, { timeoutMs: 40_000 });
  const messages = await readStream(client, stream);
  t.equal(messages.length, 300, 'one message per event');
  const bodies = messages.map((message) => message.json<ChangeEvent>());
  t.same(bodies.map((body) => body.id).sort(), events.map((event) => event.id).sort(), 'every event');
  t.same(featuresOutOfOrder(ordersByFeature(bodies)), [], 'every feature in order');
  const first = messages.find((message) => message.headers?.get('Nats-Msg-Id') === events[0]!.id)!;
  t.equal(first.subject, 'geohook.Hosted_Parcels_FeatureServer.0.u', 'the default subject template');
  t.equal(first.headers?.get('Nats-Msg-Id'), events[0]!.id, 'Nats-Msg-Id is the event id');
  t.equal(first.headers?.get('geohook-event-id'), events[0]!.id);
  t.equal(first.headers?.get('geohook-event-type'), 'change.updated');
  t.equal(first.headers?.get('geohook-service'), 'Hosted/Parcels.FeatureServer');
  t.equal(first.headers?.get('geohook-layer'), '0');
  t.match(first.headers?.get('traceparent'), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/, 'a W3C traceparent');
  t.equal(first.headers?.get('traceparent'), traceparentOf(events[0]!.id), 'the same trace for the event wherever it goes');
  t.same(first.json<ChangeEvent>(), events[0], 'the body is the event JSON');
  const manager = await client.jetstreamManager();
  t.same((await manager.streams.info(stream)).config.subjects, ['geohook.>'], 'the stream made with the subjects geohook.>');
});

t.test('a publish tried again is stored once: the stream drops a second copy by its Nats-Msg-Id', async (t) => {
  const stream = 'DEDUP';
  const publisher = createNatsPublisher(streamRoute('nats', nats.url, { stream, subject: 'dedup.<type>.<op>' }), pino({ level: 'silent' }));
  t.teardown(() => publisher.close());
  const event = burstEvent(1, 1, 'd');
  await publisher.publish(streamMessage(event));
  await publisher.publish(streamMessage(event));
  await publisher.publish(streamMessage(burstEvent(2, 1, 'd')));
  const client = await natsClient(t, nats);
  t.equal(await storedCount(client, stream), 2, 'two events, three publishes');
  const manager = await client.jetstreamManager();
  t.same((await manager.streams.info(stream)).config.subjects, ['dedup.*.*'], 'a template of its own: its wildcard form');
  const messages = await readStream(client, stream);
  t.equal(messages[0]!.subject, 'dedup.change_updated.u');
});

t.test('the broker killed and restarted mid-burst, two receivers publishing: every event once, every feature in order', async (t) => {
  const server = await startNats(t);
  const stream = 'RESTART';
  const reader = await natsReader(server.url, stream);
  t.teardown(() => reader.close());
  // A smoke: the 20,000-event rows are in `npm run test:faults` (stream-nats-restart, stream-nats-kill).
  const route = streamRoute('nats', server.url, { stream });
  await restartMidBurst(t, redis, { route, broker: server, reader, total: 400, features: 40, killAfter: 40, copiesAllowed: 0 });
});

t.test('past its last try an event is a dead letter of the route, and geohook relay replay publishes it', async (t) => {
  const server = await startNats(t);
  const stream = 'DEAD';
  const route = streamRoute('nats', server.url, {
    name: 'dead',
    stream,
    retry: { attempts: 2, backoff: { type: 'fixed', delayMs: 50, jitter: 0 } },
  });
  const pipeline = await startStreamPipeline(t, redis, [route]);
  await pipeline.addReceiver();
  await server.stop();
  const events = [burstEvent(0, 1, 'x'), burstEvent(1, 1, 'x')];
  await appendToLog(pipeline.redis, pipeline.prefix, events);
  const dead = await waitFor('two dead letters, after two tries each', async () => {
    const status = await readRelayStatus(pipeline.redis, pipeline.prefix, [route]);
    const [dead] = status.routes;
    return dead!.deadLetters === 2 && dead!.failing === 4 ? dead : undefined;
  });
  t.match(dead, { failing: 4, pending: 0, lastError: /^NATS at 127\.0\.0\.1:\d+: cannot connect/ }, 'two tries each, the broker named');
  await server.start();
  t.same((await replayDeadLetters(pipeline.redis, pipeline.prefix, 'dead')).sort(), events.map((event) => event.id).sort());
  const client = await natsClient(t, server);
  await waitFor('both published', async () => (await storedCount(client, stream).catch(() => 0)) >= 2);
  const messages = await readStream(client, stream);
  t.same(messages.map((message) => message.headers?.get('Nats-Msg-Id')).sort(), events.map((event) => event.id).sort());
  for (const message of messages)
    t.match(message.headers?.get(REPLAY_HEADER), /^\d{4}-\d\d-\d\dT/, 'a replay carries geohook-replayed-at, as a relay try does');
});

t.test('a nats route with a transform publishes what the transform makes of each event; one it fails on is a dead letter', async (t) => {
  const stream = 'SHAPED';
  const route = streamRoute('nats', nats.url, {
    name: 'shaped',
    stream,
    subject: 'shaped.<op>',
    transform: '{"id": id, "seq": after.attributes.seq, "ok": after.attributes.seq < 5 ? true : $error("too far")}',
  });
  const pipeline = await startStreamPipeline(t, redis, [route]);
  await pipeline.addReceiver();
  const events = Array.from({ length: 6 }, (_, n) => burstEvent(n, 2, 's'));
  await appendToLog(pipeline.redis, pipeline.prefix, events);
  const client = await natsClient(t, nats);
  await waitFor('five messages in the stream', async () => (await storedCount(client, stream).catch(() => 0)) >= 5);
  const queue = new Queue(relayQueueName('shaped'), { connection: pipeline.redis, prefix: pipeline.prefix });
  t.teardown(() => queue.close());
  const [dead] = await waitFor('one dead letter', async () => ((await queue.getFailed()).length === 1 ? queue.getFailed() : undefined));
  t.equal(dead!.id, events[5]!.id);
  t.match(dead!.failedReason, /^GEOHOOK_ERR_RELAY_TRANSFORM: route "shaped": the transform failed on event \w+: it threw: too far/);
  const messages = await readStream(client, stream);
  t.same(
    messages.map((message) => message.json<{ id: string; seq: number }>()).sort((a, b) => a.seq - b.seq),
    events.slice(0, 5).map((event, seq) => ({ id: event.id, seq, ok: true })),
    'the body is the transform result',
  );
  t.equal(messages[0]!.headers?.get('geohook-event-type'), 'change.updated', 'the headers are as without a transform');
});
