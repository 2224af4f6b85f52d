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
import { median } from '../figures.js';
import { startRedis } from '../redis.js';
import { benchChangeEvent } from '../relay/bench-events.js';

/** What `npm run bench -- --streams` prints under `streams`. */
export interface StreamsResult {
  /**
   * Events in the log when the lane starts; as many through the bare producer. Each side's burst is timed from its
   * first acknowledged publish to its last (neither side's connecting counts; the lane's is `bursts[].laneStartMs`).
   */
  events: number;
  /**
   * Bursts of each (bare producer, lane), alternated after an untimed one of each: the rates are the medians, each
   * `vsBare…` the median of the rounds' ratios (a round's two bursts run back to back, on the same machine's speed).
   */
  rounds: number;
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
   * CPU per event of the bursts (mean of the rounds), µs: this process (the bare producer; or the fan-out and the
   * lane) and redis-server.
   */
  cpu: Record<'bareNats' | 'natsLane' | 'bareAmqp' | 'amqpLane', CpuPerEvent>;
  /** Each round's two rates, events/s, per broker. */
  bursts: Record<'nats' | 'amqp', RoundRates[]>;
}

/** One round of a broker: the bare producer's burst, then the lane's. */
export interface RoundRates {
  barePerSec: number;
  lanePerSec: number;
  /** From the lane's start (connecting to Redis and the broker, its lease) to its first acknowledged publish, ms. */
  laneStartMs: number;
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

/** Bursts of each side, alternated after an untimed one of each (a shared machine's speed moves from one burst to the next). */
const ROUNDS = 5;
/** Events of the untimed first burst of each side. */
const WARM_EVENTS = 1000;

/** Events/s of one burst, and the CPU it took per event. */
interface Burst {
  perSec: number;
  cpu: CpuPerEvent;
  /** When the burst began (`performance.now()`). */
  startedAt: number;
  /** When its first publish was acknowledged. */
  firstAckAt: number;
}

/** The burst of `ids` from their acknowledgements in `acked`: its rate between the first and the last. */
function burstOf(acked: ReadonlyMap<string, number>, ids: readonly string[], startedAt: number, cpu: CpuPerEvent): Burst {
  let firstAckAt = Infinity;
  let lastAckAt = -Infinity;
  for (const id of ids) {
    const at = acked.get(id)!;
    firstAckAt = Math.min(firstAckAt, at);
    lastAckAt = Math.max(lastAckAt, at);
  }
  return { perSec: (ids.length - 1) / ((lastAckAt - firstAckAt) / 1000), cpu, startedAt, firstAckAt };
}

/** A publisher that notes when each of its publishes was acknowledged, by event id: the lane's and the bare producer's alike. */
function noting(publisher: StreamPublisher, acked: Map<string, number>): StreamPublisher {
  return {
    async publish(message) {
      await publisher.publish(message);
      acked.set(message.id, performance.now());
    },
    close: () => publisher.close(),
  };
}

/**
 * The bare producer: `events` made into messages and published through a publisher of its own with
 * {@link STREAM_WINDOW} publishes in flight, each awaited and its acknowledgement noted as the lane's are.
 */
async function bareBurst(publisherOf: () => StreamPublisher, events: readonly ChangeEvent[]): Promise<Burst> {
  const acked = new Map<string, number>();
  const publisher = noting(publisherOf(), acked);
  await publisher.publish(streamMessage(streamEvent('warm', 0)));
  let next = 0;
  const meter = await cpuMeter(undefined);
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: STREAM_WINDOW }, async () => {
      while (next < events.length) {
        await publisher.publish(streamMessage(events[next++]!));
      }
    }),
  );
  const cpu = await meter(events.length);
  await publisher.close();
  return burstOf(
    acked,
    events.map(({ id }) => id),
    startedAt,
    cpu,
  );
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

/** A route's lane as a receiver runs it (the fan-out and `startStreams` on a fresh Redis), in this process. */
interface LaneRig {
  /**
   * A backlog of `events` stored while the lane is stopped, timed from the lane's start to the last acknowledgement
   * (so the rate is the lane's, not that of storing the events in the same process).
   */
  burst(events: readonly ChangeEvent[]): Promise<Burst>;
  /** Events stored one group of 10 at a time at a steady pace, each timed from stored to acknowledged. */
  pace(events: readonly ChangeEvent[], perSec: number): Promise<{ p50Ms: number; p99Ms: number }>;
  close(): Promise<void>;
}

async function openLane(redisUrl: string, route: RelayRouteConfig): Promise<LaneRig> {
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
      publisherOf: (config, logger) =>
        noting(config.format === 'nats' ? createNatsPublisher(config, logger) : createAmqpPublisher(config, logger), acked),
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
  const close = async (): Promise<void> => {
    await fanout.close();
    await streams.close();
    for (const client of [redis, connection, fanoutConnection]) client.disconnect();
  };
  try {
    const warm = streamEvent(`${route.name}-warm`, 0);
    await store(redis, [warm]);
    await acknowledged(acked, [warm.id], 60_000);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    async burst(events) {
      await streams.close();
      for (let at = 0; at < events.length; at += 1000) await store(redis, events.slice(at, at + 1000));
      const meter = await cpuMeter(redis);
      const startedAt = performance.now();
      streams = startLane();
      const ids = events.map(({ id }) => id);
      await acknowledged(acked, ids, 600_000);
      return burstOf(acked, ids, startedAt, await meter(events.length));
    },
    async pace(events, perSec) {
      const group = 10;
      const storedAt = new Map<string, number>();
      const pacedFrom = performance.now();
      for (let n = 0; n < events.length; n += group) {
        const waitMs = pacedFrom + (n / perSec) * 1000 - performance.now();
        if (waitMs > 0) await sleep(waitMs);
        const stored = events.slice(n, n + group);
        await store(redis, stored);
        const now = performance.now();
        for (const event of stored) storedAt.set(event.id, now);
      }
      await acknowledged(
        acked,
        events.map((event) => event.id),
        600_000,
      );
      const latencies = events.map((event) => acked.get(event.id)! - storedAt.get(event.id)!).sort((a, b) => a - b);
      return { p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99) };
    },
    close,
  };
}

/** The medians of bursts' rates, and their mean CPU per event. */
function summary(bursts: readonly Burst[]): Pick<Burst, 'perSec' | 'cpu'> {
  const mean = (of: (cpu: CpuPerEvent) => number): number => Math.round(bursts.reduce((sum, { cpu }) => sum + of(cpu), 0) / bursts.length);
  return {
    perSec: median(bursts.map(({ perSec }) => perSec)),
    cpu: { nodeUs: mean(({ nodeUs }) => nodeUs), redisUs: mean(({ redisUs }) => redisUs) },
  };
}

/**
 * One broker: an untimed burst of the bare producer and of the lane, then {@link ROUNDS} of each, alternated; then
 * events at a pace through the lane.
 */
async function brokerRun(
  redisUrl: string,
  bare: () => StreamPublisher,
  route: RelayRouteConfig,
  settings: StreamsSettings,
): Promise<{
  bare: Pick<Burst, 'perSec' | 'cpu'>;
  lane: Pick<Burst, 'perSec' | 'cpu'>;
  vsBare: number;
  bursts: RoundRates[];
  p50Ms: number;
  p99Ms: number;
}> {
  const events = (run: string, count = settings.events): ChangeEvent[] =>
    Array.from({ length: count }, (_, n) => streamEvent(`${route.name}-${run}`, n));
  const lane = await openLane(redisUrl, route);
  try {
    const warmEvents = Math.min(WARM_EVENTS, settings.events);
    await bareBurst(bare, events('bare-warm', warmEvents));
    await lane.burst(events('lane-warm', warmEvents));
    const bares: Burst[] = [];
    const lanes: Burst[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      bares.push(await bareBurst(bare, events(`bare-${round}`)));
      lanes.push(await lane.burst(events(`lane-${round}`)));
    }
    const latency = await lane.pace(events('pace', settings.paceEvents), settings.paceEventsPerSec);
    const bursts = lanes.map((lane, round) => ({
      barePerSec: bares[round]!.perSec,
      lanePerSec: lane.perSec,
      laneStartMs: lane.firstAckAt - lane.startedAt,
    }));
    const vsBare = median(bursts.map(({ barePerSec, lanePerSec }) => lanePerSec / barePerSec));
    return { bare: summary(bares), lane: summary(lanes), vsBare, bursts, ...latency };
  } finally {
    await lane.close();
  }
}

/**
 * The streams section: a private `nats-server -js` and RabbitMQ node (a quorum queue bound to the exchange) beside a
 * fresh redis-server; per broker, bursts of the bare producer and of geohook's lane (fan-out included) alternated, then
 * the lane at a pace.
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
    const count = settings.events.toLocaleString('en-US');
    log(
      `streams: JetStream, ${ROUNDS} bursts of ${count} events each through a bare producer and geohook's lane, alternated; then ${settings.paceEventsPerSec}/s`,
    );
    const jetstream = await brokerRun(
      redis.url,
      () => createNatsPublisher(route('nats', { stream: 'BARE', subject: 'bare.<op>' }), silent),
      route('nats', { stream: 'LANE' }),
      settings,
    );
    log(`streams: RabbitMQ quorum queue, the same`);
    const quorum = await brokerRun(
      redis.url,
      () => createAmqpPublisher(route('amqp', { exchange: 'bare', auth }), silent),
      route('amqp', { exchange: 'lane', auth }),
      settings,
    );
    return {
      events: settings.events,
      rounds: ROUNDS,
      features: FEATURES,
      natsPerSec: jetstream.lane.perSec,
      bareNatsPerSec: jetstream.bare.perSec,
      vsBareNats: jetstream.vsBare,
      amqpPerSec: quorum.lane.perSec,
      bareAmqpPerSec: quorum.bare.perSec,
      vsBareAmqp: quorum.vsBare,
      paceEventsPerSec: settings.paceEventsPerSec,
      paceEvents: settings.paceEvents,
      natsP50Ms: jetstream.p50Ms,
      natsP99Ms: jetstream.p99Ms,
      amqpP50Ms: quorum.p50Ms,
      amqpP99Ms: quorum.p99Ms,
      p99Ms: Math.max(jetstream.p99Ms, quorum.p99Ms),
      cpu: { bareNats: jetstream.bare.cpu, natsLane: jetstream.lane.cpu, bareAmqp: quorum.bare.cpu, amqpLane: quorum.lane.cpu },
      bursts: { nats: jetstream.bursts, amqp: quorum.bursts },
    };
  } finally {
    await rabbitmq.remove();
    await nats.remove();
    await redis.stop();
  }
}
