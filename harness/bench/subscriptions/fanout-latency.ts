import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventLogKey } from '../../../src/redis/keys.js';
import type { ServerStats } from '../cases/case-server.js';
import { percentile } from '../changes/change-latency.js';
import { Child } from '../ipc.js';
import { processCpuMs, startRedis } from '../redis.js';
import type { PaceParams, PaceResult } from '../workers/paced-sender.js';
import { benchSubscriptions, PREFIX, startSubscribedServer, waitingLengths, waitListKeys } from './subscription-server.js';

/** From a delivery's 202 to its event in the last of the subscriptions' queues, at a steady pace. */
export interface FanoutLatency {
  perSec: number;
  /** Deliveries timed, after a tenth as many sent at the same pace and not timed. */
  events: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** How the queues were watched: their lengths read every `pollEveryMs`; each latency is over by less than that plus a round trip. */
  pollEveryMs: number;
  pollRoundTripMs: number;
  non2xx: number;
  errors: number;
  /** How late the sender was, at worst, to send a batch of deliveries. */
  maxLateMs: number;
  /**
   * CPU per timed delivery, µs, from the first sent to the last in every queue: geohook's server (acknowledgement
   * and fan-out) and its redis-server. Unlike the times, hardly moved by a busy machine.
   */
  cpuUsPerEvent: { server: number; redis?: number };
}

export interface LatencySettings {
  subscriptions: number;
  perSec: number;
  events: number;
}

const POLL_MS = 5;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The first sample (times ascending, counts never falling) whose count reaches `count`. */
function firstReaching(samples: readonly [atMs: number, count: number][], count: number): number {
  let low = 0;
  let high = samples.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (samples[middle]![1] >= count) high = middle;
    else low = middle + 1;
  }
  return samples[low]?.[0] ?? Number.NaN;
}

/**
 * Signed deliveries at a steady pace into geohook's server with `subscriptions` that each take them all. The
 * subscriptions' wait lists are read every {@link POLL_MS} ms (`LLEN`, one pipeline): with no worker, the fewest
 * waiting is how many log entries every queue holds. Each delivery's position in the event log (`j` of each entry)
 * then tells the first read that found it in the last queue; its latency runs from its 202 to that read's answer.
 */
export async function measureFanoutLatency(settings: LatencySettings): Promise<FanoutLatency> {
  const warmup = Math.ceil(settings.events / 10);
  const redis = await startRedis('fast');
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const dir = mkdtempSync(join(tmpdir(), 'geohook-bench-subs-'));
  const subscriptions = benchSubscriptions(settings.subscriptions);
  const keys = waitListKeys(subscriptions);
  let sender: Child | undefined;
  let server: Child | undefined;
  let polling = true;
  try {
    const paced = await Child.start('paced sender', 'workers/paced-sender.js', { args: [String(warmup + settings.events)] });
    sender = paced;
    const started = await startSubscribedServer(connection, redis.url, dir, subscriptions);
    server = started.server;
    const samples: [atMs: number, count: number][] = [];
    let roundTripsMs = 0;
    const poll = (async () => {
      for (; polling; await sleep(POLL_MS)) {
        const sentAtMs = performance.now();
        const lengths = await waitingLengths(connection, keys);
        roundTripsMs += performance.now() - sentAtMs;
        samples.push([Date.now(), Math.min(...lengths)]);
      }
    })();
    // Awaited below; a failed read must not be left rejected unhandled meanwhile.
    poll.catch(() => undefined);
    const pace = (from: number, count: number): Promise<PaceResult> =>
      paced.call<PaceResult>(
        'pace',
        { url: started.webhookUrl, from, count, perSec: settings.perSec } satisfies PaceParams,
        60_000 + count * 10,
      );
    await pace(0, warmup);
    const cpuBefore = { server: (await started.server.call<ServerStats>('stats')).cpuMs, redis: processCpuMs(redis.pid) };
    const result = await pace(warmup, settings.events);
    const total = warmup + settings.events;
    for (const deadline = Date.now() + 60_000; (samples.at(-1)?.[1] ?? 0) < total; await sleep(20))
      if (Date.now() > deadline)
        throw new Error(`subscriptions: ${samples.at(-1)?.[1]} of ${total} events in every subscription after 60 s`);
    const cpuAfter = { server: (await started.server.call<ServerStats>('stats')).cpuMs, redis: processCpuMs(redis.pid) };
    polling = false;
    await poll;
    const perEvent = (ms: number): number => (ms * 1000) / settings.events;

    // The accept script logs each event as `j` (its job id: the id the 202 answered), then `d`.
    const entries = await connection.xrange(eventLogKey(PREFIX), '-', '+');
    const positions = new Map(entries.map(([, fields], index) => [fields[fields.indexOf('j') + 1]!, index]));
    const latencies = result.acks.map(([id, atMs]) => {
      const position = positions.get(id);
      if (position === undefined) throw new Error(`subscriptions: event ${id} was answered 202 but is not in the event log`);
      // Handed over before its 202 was read: no wait at all.
      return Math.max(0, firstReaching(samples, position + 1) - atMs);
    });
    latencies.sort((a, b) => a - b);
    return {
      perSec: settings.perSec,
      events: settings.events,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      maxMs: latencies.at(-1) ?? Number.NaN,
      pollEveryMs: POLL_MS,
      pollRoundTripMs: roundTripsMs / Math.max(1, samples.length),
      non2xx: result.non2xx,
      errors: result.errors,
      maxLateMs: result.maxLateMs,
      cpuUsPerEvent: {
        server: perEvent(cpuAfter.server - cpuBefore.server),
        ...(cpuBefore.redis === undefined || cpuAfter.redis === undefined ? {} : { redis: perEvent(cpuAfter.redis - cpuBefore.redis) }),
      },
    };
  } finally {
    polling = false;
    await server?.close();
    await sender?.close();
    connection.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
