/**
 * The streams figures (not a test: run with `node dist-test/test/helpers/measure-streams.js [events]` after
 * `npm run build:test`): events/s a nats and an amqp route publish through the fan-out and their lane, against a bare
 * producer in the same process publishing the same events one at a time with the same acknowledgements, and the
 * p99 from an event stored to its acknowledged publish at a paced rate. Prints one JSON object `{ streams }`.
 */
import { connect as amqpConnect } from 'amqplib';
import pino from 'pino';
import t from 'tap';
import { eventLogKey } from '../../src/redis/keys.js';
import { createAmqpPublisher } from '../../src/streams/amqp-publisher.js';
import { createNatsPublisher } from '../../src/streams/nats-publisher.js';
import type { StreamPublisher } from '../../src/streams/stream-publisher.js';
import { startNats } from './nats.js';
import { startRabbitmq } from './rabbitmq.js';
import { startRedis } from './redis.js';
import { burstEvent, startStreamPipeline, streamRoute } from './stream-pipeline.js';
import { waitFor } from './wait.js';

t.setTimeout(15 * 60_000);
const events = Number(process.argv[2] ?? 3000);
const paceEventsPerSec = 1000;
const paceSeconds = 5;
const silent = pino({ level: 'silent' });
const redis = await startRedis(t);
const nats = await startNats(t);
const rabbitmq = await startRabbitmq(t);
const auth = { user: 'guest', password: 'guest' };
const channel = await (await amqpConnect(`amqp://guest:guest@127.0.0.1:${rabbitmq.port}`)).createChannel();

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

/** A bare producer: the same publisher, awaited one event at a time. */
async function bare(publisher: StreamPublisher, run: string): Promise<number> {
  await publisher.publish(burstEvent(0, 1, `${run}w`));
  const batch = Array.from({ length: events }, (_, n) => burstEvent(n, 40, run));
  const startedAt = performance.now();
  for (const event of batch) await publisher.publish(event);
  return events / ((performance.now() - startedAt) / 1000);
}

/** The lane: events appended to the log at once, timed until the last is acknowledged; then a paced run's latencies. */
async function lane(format: 'nats' | 'amqp', extra: object, run: string): Promise<{ perSec: number; p99Ms: number; p50Ms: number }> {
  const acked = new Map<string, number>();
  const wrap = (publisher: StreamPublisher): StreamPublisher => ({
    async publish(event) {
      await publisher.publish(event);
      acked.set(event.id, performance.now());
    },
    close: () => publisher.close(),
  });
  const url = format === 'nats' ? nats.url : rabbitmq.url;
  const route = streamRoute(format, url, extra);
  const pipeline = await startStreamPipeline(t, redis, [route], {
    publisherOf: (config, logger) => wrap(format === 'nats' ? createNatsPublisher(config, logger) : createAmqpPublisher(config, logger)),
  });
  await pipeline.addReceiver();
  const warm = burstEvent(0, 1, `${run}w`);
  await pipeline.redis.xadd(eventLogKey(pipeline.prefix), '*', 'j', warm.id, 'd', JSON.stringify(warm));
  await waitFor('warm', () => acked.has(warm.id), { timeoutMs: 60_000 });
  const batch = Array.from({ length: events }, (_, n) => burstEvent(n, 40, run));
  const multi = pipeline.redis.multi();
  for (const event of batch) multi.xadd(eventLogKey(pipeline.prefix), '*', 'j', event.id, 'd', JSON.stringify(event));
  const startedAt = performance.now();
  await multi.exec();
  await waitFor('all acknowledged', () => acked.has(batch.at(-1)!.id), { timeoutMs: 600_000, intervalMs: 5 });
  const perSec = events / ((performance.now() - startedAt) / 1000);
  const paced = Array.from({ length: paceEventsPerSec * paceSeconds }, (_, n) => burstEvent(n, 40, `${run}p`));
  const storedAt = new Map<string, number>();
  const pacedStart = performance.now();
  for (let n = 0; n < paced.length; n += 10) {
    const due = pacedStart + (n / paceEventsPerSec) * 1000;
    while (performance.now() < due) await new Promise((resolve) => setTimeout(resolve, 1));
    const group = paced.slice(n, n + 10);
    const write = pipeline.redis.multi();
    for (const event of group) write.xadd(eventLogKey(pipeline.prefix), '*', 'j', event.id, 'd', JSON.stringify(event));
    await write.exec();
    const now = performance.now();
    for (const event of group) storedAt.set(event.id, now);
  }
  await waitFor('paced acknowledged', () => acked.has(paced.at(-1)!.id), { timeoutMs: 600_000, intervalMs: 5 });
  const latencies = paced.map((event) => acked.get(event.id)! - storedAt.get(event.id)!);
  return { perSec, p99Ms: percentile(latencies, 99), p50Ms: percentile(latencies, 50) };
}

await channel.assertExchange('bench', 'topic', { durable: true });
await channel.assertQueue('bench', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
await channel.bindQueue('bench', 'bench', '#');
const natsBare = await bare(
  createNatsPublisher(streamRoute('nats', nats.url, { stream: 'BAREBENCH', subject: 'bare.<op>' }), silent),
  'nb',
);
const amqpBare = await bare(createAmqpPublisher(streamRoute('amqp', rabbitmq.url, { exchange: 'bench', auth }), silent), 'ab');
const natsLane = await lane('nats', { stream: 'BENCH' }, 'nl');
const amqpLane = await lane('amqp', { exchange: 'bench', auth }, 'al');
const round = (value: number): number => Math.round(value);
const streams = {
  events,
  natsPerSec: round(natsLane.perSec),
  bareNatsPerSec: round(natsBare),
  vsBareNats: Number((natsLane.perSec / natsBare).toFixed(2)),
  amqpPerSec: round(amqpLane.perSec),
  bareAmqpPerSec: round(amqpBare),
  vsBareAmqp: Number((amqpLane.perSec / amqpBare).toFixed(2)),
  paceEventsPerSec,
  natsAckToPublishP50Ms: round(natsLane.p50Ms),
  natsAckToPublishP99Ms: round(natsLane.p99Ms),
  amqpAckToPublishP50Ms: round(amqpLane.p50Ms),
  amqpAckToPublishP99Ms: round(amqpLane.p99Ms),
};
process.stdout.write(`${JSON.stringify({ streams })}\n`);
await channel.close();
