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
import { benchChangeEvent } from './bench-events.js';
import { rateOf, sinkHolds } from './sink-wait.js';

/** What `npm run bench -- --relay` prints under `relay`. */
export interface RelayResult {
  /** Events queued for the route before geohook started, then delivered (first to last arrival at the sink). */
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
  /** As many events queued for a second route whose transform ({@link BENCH_TRANSFORM}, 10 fields) builds every body, then drained. */
  transformEvents: number;
  transformPerSec: number;
  /** transformPerSec / deliveriesPerSec: the goal is ≥ 0.8. */
  transformVsPlain: number;
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
 * Relays under volume and at a steady pace, each piece in a process of its own beside a fresh redis-server: `events`
 * jobs queued for one `standard` route, then geohook's server (`startServer`) started and timed draining them into
 * the sink; as many for a second route with a 10-field transform, drained once the first is done; the same through
 * the naive worker; then, geohook running, change events written at a steady pace
 * through the change writer (fan-out included), each timed from its write to its arrival at the sink.
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
  const fill = async (queue: Queue, run: string): Promise<void> => {
    for (let start = 0; start < settings.events; start += 500)
      await queue.addBulk(
        Array.from({ length: Math.min(500, settings.events - start) }, (_, i) => {
          const event = benchChangeEvent(run, start + i);
          return { name: event.type, data: event, opts: { jobId: event.id } };
        }),
      );
  };
  let server: Child<{ url: string }> | undefined;
  let naive: Child | undefined;
  try {
    log(`relay: ${settings.events.toLocaleString('en-US')} events queued for one standard route, then geohook's server drains them`);
    await fill(relayQueue, 'drain');
    // The transform route's events wait in a paused queue until the first route is done: the two never share the cores.
    await transformQueue.pause();
    await fill(transformQueue, 'transform');
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
    const drained = await sinkHolds(sink, settings.events, 600_000);
    const deliveriesPerSec = rateOf(drained, settings.events);
    const repeats = drained.received - drained.distinct;

    log(`relay: the same number queued for a route whose 10-field transform builds every body`);
    await sink.call('reset');
    await transformQueue.resume();
    const transformed = await sinkHolds(sink, settings.events, 600_000);
    const transformPerSec = rateOf(transformed, settings.events);

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
