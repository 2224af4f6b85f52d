import { readFileSync } from 'node:fs';
import { connect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import pino from 'pino';
import t, { type Test } from 'tap';
import { amqpReader } from '../../harness/faults/stream-readers.js';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { relayStatsKey } from '../../src/redis/keys.js';
import { createAmqpPublisher } from '../../src/streams/amqp-publisher.js';
import { streamMessage, traceparentOf } from '../../src/streams/stream-message.js';
import { STREAM_WINDOW } from '../../src/streams/stream-worker.js';
import { startRabbitmq, type TestRabbitmq } from '../helpers/rabbitmq.js';
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

// RabbitMQ starts in tens of seconds on a loaded machine, and is restarted once.
t.setTimeout(3 * 60_000);
const redis = await startRedis(t);
// RabbitMQ takes seconds to start: one node for the whole file.
const rabbitmq = await startRabbitmq(t);
const auth = { user: 'guest', password: 'guest' };

/** A channel of the official client (amqplib), closed at teardown. */
async function amqpChannel(t: Test, server: TestRabbitmq): Promise<{ model: ChannelModel; channel: Channel }> {
  const model = await connect(`amqp://guest:guest@127.0.0.1:${server.port}`);
  model.on('error', () => undefined);
  const channel = await model.createChannel();
  channel.on('error', () => undefined);
  t.teardown(() => model.close().catch(() => undefined));
  return { model, channel };
}

/** A queue of `type` bound to `exchange` for every routing key. */
async function boundQueue(channel: Channel, exchange: string, name: string, type: 'classic' | 'quorum' | 'stream'): Promise<void> {
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(name, { durable: true, arguments: { 'x-queue-type': type } });
  await channel.bindQueue(name, exchange, '#');
}

/** Consumes `queue` until `count` messages came (a stream queue from its first offset), acknowledging each. */
async function consumeAll(channel: Channel, queue: string, count: number, stream = false): Promise<ConsumeMessage[]> {
  const messages: ConsumeMessage[] = [];
  await channel.prefetch(500);
  const { consumerTag } = await channel.consume(
    queue,
    (message) => {
      if (message === null) return;
      messages.push(message);
      channel.ack(message);
    },
    stream ? { arguments: { 'x-stream-offset': 'first' } } : {},
  );
  await waitFor(`${count} messages from ${queue}`, () => messages.length >= count, { timeoutMs: 50_000 });
  await channel.cancel(consumerTag);
  return messages;
}

const bodyOf = (message: ConsumeMessage): ChangeEvent => JSON.parse(message.content.toString('utf8')) as ChangeEvent;

t.test(
  'an amqp route publishes each event once to classic, quorum and stream queues, persistent, with its ids and headers, in order',
  async (t) => {
    const exchange = 'first';
    const { channel } = await amqpChannel(t, rabbitmq);
    await boundQueue(channel, exchange, 'first-classic', 'classic');
    await boundQueue(channel, exchange, 'first-quorum', 'quorum');
    await boundQueue(channel, exchange, 'first-stream', 'stream');
    const pipeline = await startStreamPipeline(t, redis, [streamRoute('amqp', rabbitmq.url, { exchange, auth })]);
    await pipeline.addReceiver();
    const events = Array.from({ length: 300 }, (_, n) => burstEvent(n, 12, 'a'));
    await appendToLog(pipeline.redis, pipeline.prefix, events);
    const ids = events.map((event) => event.id).sort();
    for (const [queue, stream] of [
      ['first-classic', false],
      ['first-quorum', false],
      ['first-stream', true],
    ] as const) {
      const messages = await consumeAll(channel, queue, 300, stream);
      t.same(messages.map((message) => message.properties.messageId as string).sort(), ids, `${queue}: every event once`);
      t.same(featuresOutOfOrder(ordersByFeature(messages.map(bodyOf))), [], `${queue}: every feature in order`);
    }
    const first = (await consumeAll(channel, 'first-stream', 300, true)).find((message) => message.properties.messageId === events[0]!.id)!;
    t.equal(first.fields.routingKey, 'Hosted_Parcels_FeatureServer.0.u', 'the default routing key template');
    t.match(first.properties, {
      messageId: events[0]!.id,
      type: 'change.updated',
      contentType: 'application/json',
      deliveryMode: 2,
      appId: 'geohook',
    });
    t.match(first.properties.headers, {
      'geohook-event-id': events[0]!.id,
      'geohook-event-type': 'change.updated',
      'geohook-service': 'Hosted/Parcels.FeatureServer',
      'geohook-layer': '0',
      traceparent: traceparentOf(events[0]!.id),
    });
    t.same(bodyOf(first), events[0], 'the body is the event JSON');
  },
);

t.test('an event no queue is bound to take is held back, said in lastError, and published once a queue is bound', async (t) => {
  const exchange = 'lonely';
  const route = streamRoute('amqp', rabbitmq.url, { name: 'lonely', exchange, auth, routingKey: 'edits.<op>' });
  const pipeline = await startStreamPipeline(t, redis, [route]);
  await pipeline.addReceiver();
  const events = [burstEvent(0, 1, 'l'), burstEvent(1, 1, 'l')];
  await appendToLog(pipeline.redis, pipeline.prefix, events);
  const lastError = await waitFor(
    'the route failing',
    async () => (await pipeline.redis.hget(relayStatsKey(pipeline.prefix, 'lonely'), 'lastError')) ?? undefined,
  );
  t.match(lastError, /no queue is bound to exchange "lonely" for routing key "edits\.u"/);
  const { channel } = await amqpChannel(t, rabbitmq);
  await boundQueue(channel, exchange, 'lonely-classic', 'classic');
  const messages = await consumeAll(channel, 'lonely-classic', 2);
  t.same(
    messages.map((message) => message.properties.messageId as string),
    events.map((event) => event.id),
    'both, in order, once a queue took them',
  );
});

t.test(
  'the broker killed and restarted mid-burst, two receivers publishing: every event, once after dedup by message id, in order',
  async (t) => {
    const exchange = 'restart';
    // The official client, connecting again after the restart (harness/faults reads the 20,000-event rows with it).
    const reader = await amqpReader(`amqp://guest:guest@127.0.0.1:${rabbitmq.port}`, exchange, 'restart-classic', 'classic');
    t.teardown(() => reader.close());
    // The 20,000-event rows are in `npm run test:faults` (stream-amqp-restart, stream-amqp-kill).
    const route = streamRoute('amqp', rabbitmq.url, { name: 'restart', exchange, auth });
    const options = { route, broker: rabbitmq, reader, total: 2000, features: 40, killAfter: 200, copiesAllowed: STREAM_WINDOW };
    await restartMidBurst(t, redis, options);
  },
);

/** The connections open to the broker on `port` from this machine's clients (ESTABLISHED, the port remote), from /proc/net/tcp. */
function connectionsTo(port: number): number {
  const remote = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((file) => readFileSync(file, 'utf8').split('\n').slice(1))
    .filter((line) => {
      const [, , remoteAddress, state] = line.trim().split(/\s+/);
      return remoteAddress?.endsWith(remote) === true && state === '01';
    }).length;
}

t.test('a channel the broker closes alone closes its connection: the next publish opens both anew (issue 56)', async (t) => {
  const exchange = 'solo';
  const { channel } = await amqpChannel(t, rabbitmq);
  await boundQueue(channel, exchange, 'solo-classic', 'classic');
  const publisher = createAmqpPublisher(streamRoute('amqp', rabbitmq.url, { name: 'solo', exchange, auth }), pino({ level: 'silent' }));
  t.teardown(() => publisher.close());
  await publisher.publish(streamMessage(burstEvent(0, 1, 'o')));
  const open = connectionsTo(rabbitmq.port);
  // Publishing to an exchange that is gone is a channel error: the broker closes the channel, not the connection.
  await channel.deleteExchange(exchange);
  await t.rejects(publisher.publish(streamMessage(burstEvent(1, 1, 'o'))), { code: 'GEOHOOK_ERR_STREAM_PUBLISH' });
  await waitFor('the publisher’s connection closed with its channel', () => connectionsTo(rabbitmq.port) === open - 1);
  await boundQueue(channel, exchange, 'solo-classic', 'classic');
  await publisher.publish(streamMessage(burstEvent(2, 1, 'o')));
  t.equal(connectionsTo(rabbitmq.port), open, 'one connection again, the new one');
  const messages = await consumeAll(channel, 'solo-classic', 2);
  t.same(
    messages.map((message) => message.properties.messageId as string),
    [burstEvent(0, 1, 'o').id, burstEvent(2, 1, 'o').id],
  );
});
