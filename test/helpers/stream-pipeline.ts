import { Redis } from 'ioredis';
import pino from 'pino';
import type { Test } from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import type { RelayRouteConfig } from '../../src/config/relay-schema.js';
import type { RedisServer } from '../../src/embedded/redis-server.js';
import { startFanout } from '../../src/fanout/start-fanout.js';
import { eventLogKey } from '../../src/redis/keys.js';
import { startStreams, type StreamsOptions } from '../../src/streams/start-streams.js';
import { uniquePrefix } from './receiver.js';
import { changeUpdated } from './relay-events.js';

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
    const fanout = startFanout({ connection: fanoutConnection, prefix, routes: streams.destinations, retentionMs: 60_000, logger: silent });
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
