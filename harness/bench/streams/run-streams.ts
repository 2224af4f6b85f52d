import { setTimeout as sleep } from 'node:timers/promises';
import { connect as amqpConnect } from 'amqplib';
import { Redis } from 'ioredis';
import pino from 'pino';
import type { ChangeEvent } from '../../../src/changes/change-event.js';
import type { RelayRouteConfig } from '../../../src/config/relay-schema.js';
import { startFanout } from '../../../src/fanout/start-fanout.js';
import { eventLogKey } from '../../../src/redis/keys.js';
import { createAmqpPublisher } from '../../../src/streams/amqp-publisher.js';
import { createNatsPublisher } from '../../../src/streams/nats-publisher.js';
import { startStreams, type Streams } from '../../../src/streams/start-streams.js';
import { streamMessage } from '../../../src/streams/stream-message.js';
import type { StreamPublisher } from '../../../src/streams/stream-publisher.js';
import { STREAM_WINDOW } from '../../../src/streams/stream-worker.js';
import { startNatsServer } from '../../brokers/nats-server.js';
import { startRabbitmqServer } from '../../brokers/rabbitmq-server.js';
import { percentile } from '../changes/change-latency.js';
import { startRedis } from '../redis.js';
import { benchChangeEvent } from '../relay/bench-events.js';

/** What `npm run bench -- --streams` prints under `streams`. */
export interface StreamsResult {
  /** Events in the log when the lane starts, timed until its broker acknowledged the last; as many through the bare producer. */
  events: number;
  /** Features the events are spread over (each feature's events are published one after the other). */
  features: number;
  natsPerSec: number;
  /** A bare producer in the same process: geohook's publisher, as many publishes in flight as a lane holds, no Redis. */
  bareNatsPerSec: number;
  vsBareNats: number;
  /** Into a quorum queue. */
  amqpPerSec: number;
  bareAmqpPerSec: number;
  vsBareAmqp: number;
  /** Events written to the log at this rate, each timed from stored to acknowledged by the broker. */
  paceEventsPerSec: number;
  paceEvents: number;
  natsP50Ms: number;
  natsP99Ms: number;
  amqpP50Ms: number;
  amqpP99Ms: number;
  /** The worse of the two p99s. */
  p99Ms: number;
  /**
   * CPU per event of each burst, µs: this process (the bare producer; or the fan-out and the lane)
   * and redis-server.
   */
  cpu: Record<'bareNats' | 'natsLane' | 'bareAmqp' | 'amqpLane', CpuPerEvent>;
}

export interface CpuPerEvent {
  nodeUs: number;
  redisUs: number;
}

/** redis-server's CPU time so far (user + system), µs. */
async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string): number => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

/** Starts counting CPU; the returned function gives CPU per event over `events`. */
async function cpuMeter(redis: Redis | undefined): Promise<(events: number) => Promise<CpuPerEvent>> {
  const node = process.cpuUsage();
  const redisFrom = redis === undefined ? 0 : await redisCpuUs(redis);
  return async (events) => {
    const used = process.cpuUsage(node);
    const redisUs = redis === undefined ? 0 : (await redisCpuUs(redis)) - redisFrom;
    return { nodeUs: Math.round((used.user + used.system) / events), redisUs: Math.round(redisUs / events) };
  };
}

export interface StreamsSettings {
  events: number;
  paceEventsPerSec: number;
  /** Events stored one group of 10 at a time at `paceEventsPerSec`, each timed to its acknowledged publish. */
  paceEvents: number;
}

const silent = pino({ level: 'silent' });
/** Features the events are spread over: the lane publishes each feature's events one after the other. */
const FEATURES = 1000;
const PREFIX = 'bench-streams';

/** The `n`-th event of `run`: feature `n % FEATURES`. */
function streamEvent(run: string, n: number): ChangeEvent {
  const event = benchChangeEvent(run, n);
  const feature = n % FEATURES;
  return { ...event, key: { objectId: feature, globalId: `{00000000-0000-0000-0000-${String(feature).padStart(12, '0')}}` } };
}

/** The bare producer: `events` made into messages and published with {@link STREAM_WINDOW} publishes in flight, each awaited; events/s. */
async function bareRate(publisher: StreamPublisher, events: readonly ChangeEvent[]): Promise<{ perSec: number; cpu: CpuPerEvent }> {
  await publisher.publish(streamMessage(streamEvent('warm', 0)));
  let next = 0;
  const meter = await cpuMeter(undefined);
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: STREAM_WINDOW }, async () => {
      while (next < events.length) await publisher.publish(streamMessage(events[next++]!));
    }),
  );
  const perSec = events.length / ((performance.now() - startedAt) / 1000);
  const cpu = await meter(events.length);
  await publisher.close();
  return { perSec, cpu };
}

/** Appends events to the event log as the accept script does; resolves once stored. */
async function store(redis: Redis, events: readonly ChangeEvent[]): Promise<void> {
  const multi = redis.multi();
  for (const event of events) multi.xadd(eventLogKey(PREFIX), '*', 'j', event.id, 'd', JSON.stringify(event));
  await multi.exec();
}

/** Resolves once every event of `ids` was acknowledged. */
async function acknowledged(acked: Map<string, number>, ids: readonly string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let at = 0; at < ids.length;) {
    if (acked.has(ids[at]!)) at += 1;
    else if (Date.now() > deadline) throw new Error(`streams: ${at} of ${ids.length} events acknowledged after ${timeoutMs} ms`);
    else await sleep(5);
  }
}

/**
 * One route's lane as a receiver runs it (the fan-out and `startStreams` on a fresh Redis), in this process: a backlog
 * of `events` stored while the lane is stopped, timed from the lane's start to the last acknowledgement (so the rate
 * is the lane's, not that of storing the events in the same process); then events stored at a steady pace, each timed.
 */
async function laneRun(
  redisUrl: string,
  route: RelayRouteConfig,
  settings: StreamsSettings,
): Promise<{ perSec: number; p50Ms: number; p99Ms: number; cpu: CpuPerEvent }> {
  const acked = new Map<string, number>();
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const fanoutConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const startLane = (): Streams =>
    startStreams({
      routes: [route],
      connection,
      prefix: PREFIX,
      completedJobs: { ageSeconds: 3600, count: 1000 },
      logger: silent,
      publisherOf: (config, logger) => {
        const publisher = config.format === 'nats' ? createNatsPublisher(config, logger) : createAmqpPublisher(config, logger);
        return {
          async publish(message) {
            await publisher.publish(message);
            acked.set(message.id, performance.now());
          },
          close: () => publisher.close(),
        };
      },
    });
  let streams = startLane();
  const fanout = startFanout({
    connection: fanoutConnection,
    prefix: PREFIX,
    routes: [],
    readers: streams.readers,
    retentionMs: 60_000,
    logger: silent,
  });
  try {
    const warm = streamEvent(`${route.name}-warm`, 0);
    await store(redis, [warm]);
    await acknowledged(acked, [warm.id], 60_000);
    await streams.close();
    const burst = Array.from({ length: settings.events }, (_, n) => streamEvent(`${route.name}-burst`, n));
    for (let at = 0; at < burst.length; at += 1000) await store(redis, burst.slice(at, at + 1000));
    const meter = await cpuMeter(redis);
    const startedAt = performance.now();
    streams = startLane();
    await acknowledged(
      acked,
      burst.map((event) => event.id),
      600_000,
    );
    const perSec = burst.length / ((performance.now() - startedAt) / 1000);
    const cpu = await meter(burst.length);

    const group = 10;
    const paced = Array.from({ length: settings.paceEvents }, (_, n) => streamEvent(`${route.name}-pace`, n));
    const storedAt = new Map<string, number>();
    const pacedFrom = performance.now();
    for (let n = 0; n < paced.length; n += group) {
      const waitMs = pacedFrom + (n / settings.paceEventsPerSec) * 1000 - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      const events = paced.slice(n, n + group);
      await store(redis, events);
      const now = performance.now();
      for (const event of events) storedAt.set(event.id, now);
    }
    await acknowledged(
      acked,
      paced.map((event) => event.id),
      600_000,
    );
    const latencies = paced.map((event) => acked.get(event.id)! - storedAt.get(event.id)!).sort((a, b) => a - b);
    return { perSec, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), cpu };
  } finally {
    await fanout.close();
    await streams.close();
    for (const client of [redis, connection, fanoutConnection]) client.disconnect();
  }
}

/**
 * The streams section: a private `nats-server -js` and RabbitMQ node (a quorum queue bound to the exchange) beside a
 * fresh redis-server; per broker, the bare producer, then geohook's lane (fan-out included) on a burst and at a pace.
 */
export async function runStreams(settings: StreamsSettings, log: (line: string) => void): Promise<StreamsResult> {
  const redis = await startRedis('fast');
  const nats = await startNatsServer();
  const rabbitmq = await startRabbitmqServer();
  try {
    const auth = { user: 'guest', password: 'guest' };
    const model = await amqpConnect(`amqp://guest:guest@127.0.0.1:${rabbitmq.port}`);
    const channel = await model.createChannel();
    for (const name of ['bare', 'lane']) {
      await channel.assertExchange(name, 'topic', { durable: true });
      await channel.assertQueue(name, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      await channel.bindQueue(name, name, '#');
    }
    await model.close();
    const route = (format: 'nats' | 'amqp', extra: Partial<RelayRouteConfig>): RelayRouteConfig => ({
      name: `bench-${format}`,
      url: format === 'nats' ? nats.url : rabbitmq.url,
      types: ['change.*'],
      format,
      timeoutMs: 30_000,
      ...extra,
    });
    const events = (run: string): ChangeEvent[] => Array.from({ length: settings.events }, (_, n) => streamEvent(run, n));
    const count = settings.events.toLocaleString('en-US');
    log(`streams: ${count} events through a bare producer into JetStream (${STREAM_WINDOW} in flight)`);
    const bareNats = await bareRate(createNatsPublisher(route('nats', { stream: 'BARE', subject: 'bare.<op>' }), silent), events('nb'));
    log(`streams: ${count} events stored, then through geohook's lane (started) into JetStream; then ${settings.paceEventsPerSec}/s`);
    const nl = await laneRun(redis.url, route('nats', { stream: 'LANE' }), settings);
    log(`streams: ${count} events through a bare producer into a RabbitMQ quorum queue (${STREAM_WINDOW} in flight)`);
    const bareAmqp = await bareRate(createAmqpPublisher(route('amqp', { exchange: 'bare', auth }), silent), events('ab'));
    log(`streams: ${count} events stored, then through geohook's lane (started) into a quorum queue; then ${settings.paceEventsPerSec}/s`);
    const al = await laneRun(redis.url, route('amqp', { exchange: 'lane', auth }), settings);
    const bareNatsPerSec = bareNats.perSec;
    const bareAmqpPerSec = bareAmqp.perSec;
    return {
      events: settings.events,
      features: FEATURES,
      natsPerSec: nl.perSec,
      bareNatsPerSec,
      vsBareNats: nl.perSec / bareNatsPerSec,
      amqpPerSec: al.perSec,
      bareAmqpPerSec,
      vsBareAmqp: al.perSec / bareAmqpPerSec,
      paceEventsPerSec: settings.paceEventsPerSec,
      paceEvents: settings.paceEvents,
      natsP50Ms: nl.p50Ms,
      natsP99Ms: nl.p99Ms,
      amqpP50Ms: al.p50Ms,
      amqpP99Ms: al.p99Ms,
      p99Ms: Math.max(nl.p99Ms, al.p99Ms),
      cpu: { bareNats: bareNats.cpu, natsLane: nl.cpu, bareAmqp: bareAmqp.cpu, amqpLane: al.cpu },
    };
  } finally {
    await rabbitmq.remove();
    await nats.remove();
    await redis.stop();
  }
}
