import { Redis } from 'ioredis';
import pino from 'pino';
import type { Test } from 'tap';
import type { StreamReader } from '../../harness/faults/stream-readers.js';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import type { RelayRouteConfig } from '../../src/config/relay-schema.js';
import type { RedisServer } from '../../src/embedded/redis-server.js';
import { startFanout } from '../../src/fanout/start-fanout.js';
import { eventLogKey } from '../../src/redis/keys.js';
import { startStreams, type StreamsOptions } from '../../src/streams/start-streams.js';
import { uniquePrefix } from './receiver.js';
import { changeUpdated } from './relay-events.js';
import { waitFor } from './wait.js';

const silent = pino({ level: 'silent' });

/** The `n`-th change of `features` features: feature `n % features`, its `seq` the order geohook stored it in. */
export function burstEvent(n: number, features: number, run = 'r'): ChangeEvent {
  const feature = n % features;
  const id = `${run}${String(n).padStart(8, '0')}`.padEnd(64, 'a');
  return changeUpdated({
    id,
    key: { objectId: feature, globalId: `{00000000-0000-0000-0000-${String(feature).padStart(12, '0')}}` },
    after: { attributes: { objectid: feature, status: 'Open', seq: n } },
  });
}

/** Appends events to the event log of `prefix`, as the accept script does (`j` the job id, `d` the data), in order. */
export async function appendToLog(redis: Redis, prefix: string, events: readonly ChangeEvent[]): Promise<void> {
  for (let at = 0; at < events.length; at += 500) {
    const multi = redis.multi();
    for (const event of events.slice(at, at + 500)) multi.xadd(eventLogKey(prefix), '*', 'j', event.id, 'd', JSON.stringify(event));
    await multi.exec();
  }
}

/** A receiver's part in streams: the fan-out and the stream lanes of `routes`, on a prefix, closed at teardown. */
export interface StreamPipeline {
  prefix: string;
  /** A connection of the test's own. */
  redis: Redis;
  /** Starts one more receiver's lanes (and fan-out) on the same prefix; closed at teardown. */
  addReceiver(): Promise<{ close(): Promise<void> }>;
}

/** Stream routes fed by the fan-out of a fresh prefix, as `startOutputs` runs them (receivers: how many run them). */
export async function startStreamPipeline(
  t: Test,
  redisServer: RedisServer,
  routes: RelayRouteConfig[],
  extra: Partial<StreamsOptions> = {},
): Promise<StreamPipeline> {
  const prefix = uniquePrefix();
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  t.teardown(() => redis.disconnect());
  const addReceiver = async () => {
    const connection = new Redis(redisServer.url, { maxRetriesPerRequest: null });
    const fanoutConnection = new Redis(redisServer.url, { maxRetriesPerRequest: null });
    const streams = startStreams({
      routes,
      connection,
      prefix,
      completedJobs: { ageSeconds: 3600, count: 100_000 },
      logger: silent,
      ...extra,
    });
    const fanout = startFanout({
      connection: fanoutConnection,
      prefix,
      routes: [],
      readers: streams.readers,
      retentionMs: 60_000,
      logger: silent,
    });
    let closed = false;
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      await fanout.close();
      await streams.close();
      connection.disconnect();
      fanoutConnection.disconnect();
    };
    t.teardown(close);
    return { close };
  };
  return { prefix, redis, addReceiver };
}

/** A relay route of format `format` taking every change event, as GEOHOOK_CONFIG's loader leaves it. */
export const streamRoute = (format: 'nats' | 'amqp', url: string, extra: Partial<RelayRouteConfig> = {}): RelayRouteConfig => ({
  name: `${format}-route`,
  url,
  types: ['change.*'],
  format,
  // Tries every 100 ms for about 3 minutes: a broker restarted meanwhile is waited for, not given up on.
  retry: { attempts: 2000, backoff: { type: 'fixed', delayMs: 100, jitter: 0 } },
  timeoutMs: 2000,
  ...extra,
});

/** Every feature's `seq`s in the order they were read: sorted when each feature's events came in order. */
export function ordersByFeature(events: readonly { after?: { attributes: Record<string, unknown> } | null }[]): Map<unknown, number[]> {
  const byFeature = new Map<unknown, number[]>();
  for (const event of events) {
    const attributes = event.after?.attributes ?? {};
    const list = byFeature.get(attributes.objectid) ?? [];
    list.push(Number(attributes.seq));
    byFeature.set(attributes.objectid, list);
  }
  return byFeature;
}

/** The features whose events were not read in the order they were stored. */
export const featuresOutOfOrder = (byFeature: Map<unknown, number[]>): unknown[] =>
  [...byFeature].filter(([, seqs]) => seqs.some((seq, index) => index > 0 && seq < seqs[index - 1]!)).map(([feature]) => feature);

/** A broker a test kills and starts again. */
export interface RestartableBroker {
  kill(): Promise<void>;
  start(): Promise<void>;
}

/** Options of {@link restartMidBurst}. */
export interface RestartMidBurst {
  route: RelayRouteConfig;
  broker: RestartableBroker;
  /** The consumer of what the route published, with the broker's official client. */
  reader: StreamReader;
  /** Events stored, over `features` features: half before the kill, half while the broker is away. */
  total: number;
  features: number;
  /** Messages read before the kill. */
  killAfter: number;
  /** Copies of an event the consumer may read (dropped by id): none for JetStream's duplicate window. */
  copiesAllowed: number;
}

/**
 * The restart smoke of a stream route: two receivers publish a burst; once a part is read the broker is killed, the
 * rest stored while it is away, and the broker started again. Every event id must be read, no more copies than
 * allowed, every feature in order (first copies), and publishes must have failed meanwhile (and been tried again).
 */
export async function restartMidBurst(t: Test, redisServer: RedisServer, options: RestartMidBurst): Promise<void> {
  const { broker, reader, total } = options;
  let failedTries = 0;
  const pipeline = await startStreamPipeline(t, redisServer, [options.route], {
    onOutcome: (_route, outcome) => {
      if (!outcome.delivered) failedTries += 1;
    },
  });
  await pipeline.addReceiver();
  await pipeline.addReceiver();
  const events = Array.from({ length: total }, (_, n) => burstEvent(n, options.features, 'k'));
  await appendToLog(pipeline.redis, pipeline.prefix, events.slice(0, total / 2));
  await waitFor('a part of the burst published', async () => (await reader.stored()) >= options.killAfter, { timeoutMs: 40_000 });
  await broker.kill();
  await appendToLog(pipeline.redis, pipeline.prefix, events.slice(total / 2));
  await broker.start();
  await waitFor(`${total} distinct event ids`, async () => (await reader.stored()) >= total, { timeoutMs: 60_000 });
  const messages = await reader.readAll();
  t.same([...new Set(messages.map((message) => message.id))].sort(), events.map((event) => event.id).sort(), 'every event id');
  t.ok(messages.length - total <= options.copiesAllowed, `copies to drop by id: ${messages.length - total}`);
  const firstCopies = messages.filter((message, index) => messages.findIndex((other) => other.id === message.id) === index);
  t.same(featuresOutOfOrder(ordersByFeature(firstCopies.map((message) => message.body as ChangeEvent))), [], 'every feature in order');
  t.ok(failedTries > 0, `publishes failed while the broker was away (${failedTries}) and were tried again`);
}
