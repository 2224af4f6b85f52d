import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { changeEventsQueueName } from '../../../src/changes/change-event.js';
import { ChangeWriter } from '../../../src/changes/change-writer.js';
import type { RelayRouteConfig } from '../../../src/config/relay-schema.js';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { relayJobOptions, relayQueueName } from '../../../src/relay/relay-queues.js';
import { createRelayRoute } from '../../../src/relay/relay-route.js';
import { percentile } from '../changes/change-latency.js';
import { Child } from '../ipc.js';
import { startRedis } from '../redis.js';
import type { RelaySinkStats } from '../workers/relay-sink.js';
import { benchChangeEvent } from './bench-events.js';
import { rateOf, sinkHolds, spanMs } from './sink-wait.js';

/** What `npm run bench -- --relay` prints under `relay`. */
export interface RelayResult {
  /**
   * Events delivered through one standard route (first to last arrival at the sink), after a warm-up through both
   * routes, in two rounds of half the events that alternate which route drains first.
   */
  events: number;
  deliveriesPerSec: number;
  /** The same events through a BullMQ worker (default concurrency) that awaits one `fetch` per event. */
  naiveEvents: number;
  naivePerSec: number;
  /** deliveriesPerSec / naivePerSec. */
  vsNaive: number;
  /** Change events written (ChangeWriter, fan-out included) at `paceEventsPerSec`, each timed to the sink. */
  paceEventsPerSec: number;
  paceEvents: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Requests the sink got beyond one per event (at-least-once: 0 when nothing was retried). */
  repeats: number;
  /** As many events through a second route whose transform ({@link BENCH_TRANSFORM}, 10 fields) builds every body, in the same rounds. */
  transformEvents: number;
  transformPerSec: number;
  /** transformPerSec / deliveriesPerSec: the goal is ≥ 0.8. */
  transformVsPlain: number;
  /** Events through each route before the timed rounds. */
  warmUpEvents: number;
  /** The routes in the order the timed rounds drained them: `plain`, `transform`, then `transform`, `plain`. */
  order: ('plain' | 'transform')[];
}

/** The transform of the bench's second route: a flat object of 10 fields, each a path into the event (docs/relays.md#transforms). */
export const BENCH_TRANSFORM = `{
  "id": id, "type": type, "layer": layer.name, "parcel": after.attributes.parcel_id, "status": after.attributes.status,
  "previousStatus": before.attributes.status, "owner": after.attributes.owner, "area": after.attributes.area_sqm,
  "editor": editor.user, "at": ts
}`;

export interface RelaySettings {
  events: number;
  naiveEvents: number;
  paceEventsPerSec: number;
  paceSeconds: number;
}

const PREFIX = 'bench-relay';
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Relays under volume and at a steady pace, each piece in a process of its own beside a fresh redis-server:
 * geohook's server (`startServer`) started with one `standard` route and a second with a 10-field transform, both
 * queues paused; a warm-up through each; then `events` per route, timed draining into the sink, in two rounds
 * of alternate order, each route alone at a time; the same through the naive worker; then, geohook running, change
 * events written at a steady pace through the change writer (fan-out included), each timed from its write to its
 * arrival at the sink.
 */
export async function runRelay(settings: RelaySettings, log: (line: string) => void): Promise<RelayResult> {
  const redis = await startRedis('fast');
  const sink = await Child.start<{ port: number }>('relay sink', 'workers/relay-sink.js');
  const dir = mkdtempSync(join(tmpdir(), 'geohook-bench-relay-'));
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const route: RelayRouteConfig = {
    name: 'bench',
    url: `http://127.0.0.1:${sink.ready.port}/in`,
    types: ['change.*'],
    format: 'standard',
    secret: SECRET,
  };
  const transformRoute: RelayRouteConfig = { ...route, name: 'bench-transform', transform: BENCH_TRANSFORM };
  const completedJobs = { ageSeconds: 3600, count: 1000 };
  const relayQueue = new Queue(relayQueueName(route.name), {
    connection,
    prefix: PREFIX,
    defaultJobOptions: relayJobOptions(createRelayRoute(route), completedJobs),
  });
  const transformQueue = new Queue(relayQueueName(transformRoute.name), {
    connection,
    prefix: PREFIX,
    defaultJobOptions: relayJobOptions(createRelayRoute(transformRoute), completedJobs),
  });
  const fill = async (queue: Queue, run: string, count: number): Promise<void> => {
    for (let start = 0; start < count; start += 500)
      await queue.addBulk(
        Array.from({ length: Math.min(500, count - start) }, (_, i) => {
          const event = benchChangeEvent(run, start + i);
          return { name: event.type, data: event, opts: { jobId: event.id } };
        }),
      );
  };
  /**
   * Fills `queue` (paused, so that filling it costs the drain nothing) with `count` events of `run`, then lets the
   * server drain them alone into the emptied sink; resolves to the sink's stats once it holds them all.
   */
  const drain = async (queue: Queue, run: string, count: number): Promise<RelaySinkStats> => {
    await queue.pause();
    await fill(queue, run, count);
    await sink.call('reset');
    await queue.resume();
    return sinkHolds(sink, count, 600_000);
  };
  let server: Child<{ url: string }> | undefined;
  let naive: Child | undefined;
  try {
    // Both queues wait paused until the server is warm: neither route gets its cold start.
    await relayQueue.pause();
    await transformQueue.pause();
    const config = join(dir, 'geohook.json');
    writeFileSync(config, JSON.stringify({ relays: [route, transformRoute], completedJobs }));
    const env = {
      REDIS_URL: redis.url,
      HOST: '127.0.0.1',
      PORT: String(await findFreePort()),
      GEOHOOK_PREFIX: PREFIX,
      GEOHOOK_CONFIG: config,
      LOG_LEVEL: 'silent',
    };
    server = await Child.start('geohook', 'workers/geohook-server.js', { args: [JSON.stringify(env)] });
    const warmUp = Math.min(1000, Math.max(100, Math.floor(settings.events / 10)));
    log(`relay: a warm-up of ${warmUp} events through each route, not timed`);
    await drain(relayQueue, 'warm-plain', warmUp);
    await drain(transformQueue, 'warm-transform', warmUp);

    // Two rounds of half the events each, in alternate order (plain first, then the transform first): what one
    // order gives the second route (a warmer process, a busier Redis) the other gives the first.
    log(
      `relay: ${settings.events.toLocaleString('en-US')} events for one standard route, and as many for a route whose 10-field ` +
        'transform builds every body, drained by geohook in two rounds of alternate order',
    );
    const plain = { events: 0, ms: 0, repeats: 0 };
    const transform = { events: 0, ms: 0 };
    const half = Math.ceil(settings.events / 2);
    const order: RelayResult['order'] = [];
    for (const [round, transformFirst] of [false, true].entries()) {
      const count = round === 0 ? half : settings.events - half;
      const runPlain = async (): Promise<void> => {
        order.push('plain');
        const stats = await drain(relayQueue, `drain-${round}`, count);
        plain.events += count;
        plain.ms += spanMs(stats);
        plain.repeats += stats.received - stats.distinct;
      };
      const runTransform = async (): Promise<void> => {
        order.push('transform');
        const stats = await drain(transformQueue, `transform-${round}`, count);
        transform.events += count;
        transform.ms += spanMs(stats);
      };
      if (transformFirst) {
        await runTransform();
        await runPlain();
      } else {
        await runPlain();
        await runTransform();
      }
    }
    const deliveriesPerSec = (plain.events * 1000) / plain.ms;
    const transformPerSec = (transform.events * 1000) / transform.ms;
    const repeats = plain.repeats;

    log(`relay: ${settings.naiveEvents.toLocaleString('en-US')} events through a worker that awaits one fetch per event`);
    await sink.call('reset');
    const naiveQueue = new Queue('naive-relay', { connection, prefix: PREFIX });
    for (let start = 0; start < settings.naiveEvents; start += 500)
      await naiveQueue.addBulk(
        Array.from({ length: Math.min(500, settings.naiveEvents - start) }, (_, i) => {
          const event = benchChangeEvent('naive', start + i);
          return { name: event.type, data: event, opts: { jobId: event.id, removeOnComplete: true } };
        }),
      );
    await naiveQueue.close();
    const args = { redisUrl: redis.url, prefix: PREFIX, queue: 'naive-relay', url: route.url, secret: SECRET };
    naive = await Child.start('naive relay', 'workers/naive-relay.js', { args: [JSON.stringify(args)] });
    await naive.call('run');
    const naiveStats = await sinkHolds(sink, settings.naiveEvents, 600_000);
    const naivePerSec = rateOf(naiveStats, settings.naiveEvents);
    await naive.close();
    naive = undefined;

    const paceEvents = settings.paceEventsPerSec * settings.paceSeconds;
    log(`relay: ${paceEvents.toLocaleString('en-US')} change events written at ${settings.paceEventsPerSec}/s, each timed to the sink`);
    await sink.call('reset');
    const queue = new Queue(changeEventsQueueName, { connection, prefix: PREFIX });
    const writer = new ChangeWriter(connection, { queue, prefix: PREFIX, dedupMs: 3_600_000 });
    const writtenAtMs = new Map<string, number>();
    const batch = 10;
    const intervalMs = (1000 * batch) / settings.paceEventsPerSec;
    const startedAtMs = Date.now();
    for (let n = 0; n < paceEvents; n += batch) {
      const waitMs = startedAtMs + (n / batch) * intervalMs - Date.now();
      if (waitMs > 0) await sleep(waitMs);
      const events = Array.from({ length: batch }, (_, i) => benchChangeEvent('pace', n + i));
      const at = Date.now();
      for (const event of events) writtenAtMs.set(event.id, at);
      await writer.write(events);
    }
    await sinkHolds(sink, paceEvents, 60_000);
    await queue.close();
    const arrivals = await sink.call<Record<string, number>>('arrivals');
    const latencies = [...writtenAtMs].map(([id, at]) => arrivals[id]! - at).sort((a, b) => a - b);
    return {
      events: settings.events,
      deliveriesPerSec,
      naiveEvents: settings.naiveEvents,
      naivePerSec,
      vsNaive: deliveriesPerSec / naivePerSec,
      paceEventsPerSec: settings.paceEventsPerSec,
      paceEvents,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      maxMs: latencies.at(-1)!,
      repeats,
      transformEvents: settings.events,
      transformPerSec,
      transformVsPlain: transformPerSec / deliveriesPerSec,
      warmUpEvents: warmUp,
      order,
    };
  } finally {
    await naive?.close();
    await server?.close();
    await relayQueue.close();
    await transformQueue.close();
    connection.disconnect();
    await sink.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
