import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventLogKey, subscriptionDroppedKey } from '../../../src/redis/keys.js';
import { SubscriptionRegistry } from '../../../src/subscriptions/subscription-registry.js';
import type { CaseParams, ServerStats } from '../cases/case-server.js';
import { Child } from '../ipc.js';
import { BENCH_SECRET, WEBHOOK_PATH } from '../payloads.js';
import { processCpuMs, startRedis } from '../redis.js';
import type { LoadParams, LoadResult } from '../workers/loader.js';
import { benchSubscriptions, PREFIX, startSubscribedServer, waitingLengths, waitListKeys } from './subscription-server.js';

/** The fan-out under volume: a log of `events` handed to every subscription. */
export interface FanoutRate {
  events: number;
  subscriptions: number;
  /** events × subscriptions / seconds from the fan-out's first job to every queue holding every event. */
  perSec: number;
  seconds: number;
  /** Events each subscription's queue held at the end (all of them: anything else is reported as a problem). */
  fewestHeld: number;
  /** Events dropped by a backlog cap (0). */
  dropped: number;
  /**
   * CPU per job handed over (events × subscriptions), µs: geohook's server from when it was ready (its fan-out had just
   * begun) and its redis-server from before it started, to the end. Unlike `perSec`, hardly moved by a busy machine.
   */
  cpuUsPerJob: { server: number; redis?: number };
}

const POLL_MS = 5;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `events` signed deliveries stored by geohook's receiver alone (`buildReceiver`, which runs no fan-out) after the
 * `subscriptions` were made, then geohook's server started: timed from the last poll that found no job in any
 * subscription's queue to the first that found every event in all of them (both bounds err on the slow side by a
 * poll at most: every `POLL_MS`, `LLEN` of the wait lists in one pipeline).
 */
export async function measureFanoutRate(loader: Child, events: number, subscriptionCount: number): Promise<FanoutRate> {
  const redis = await startRedis('fast');
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const dir = mkdtempSync(join(tmpdir(), 'geohook-bench-subs-'));
  const subscriptions = benchSubscriptions(subscriptionCount);
  const keys = waitListKeys(subscriptions);
  let server: Child | undefined;
  let polling = true;
  try {
    const registry = new SubscriptionRegistry(connection, PREFIX);
    for (const subscription of subscriptions) await registry.create(subscription, { origin: 'config' });
    const params: CaseParams = { redisUrl: redis.url, prefix: PREFIX, secret: BENCH_SECRET };
    const receiver = await Child.start<{ port: number }>('geohook receiver', 'cases/geohook.js', { args: [JSON.stringify(params)] });
    try {
      await loader.call('reset');
      const url = `http://127.0.0.1:${receiver.ready.port}${WEBHOOK_PATH}`;
      const load = { url, connections: Math.min(64, events), amount: events, distinct: true } satisfies LoadParams;
      const stored = await loader.call<LoadResult>('run', load, 60_000 + events * 5);
      if (stored.count2xx !== events) throw new Error(`subscriptions: ${stored.count2xx} of ${events} deliveries answered 2xx`);
    } finally {
      await receiver.close();
    }
    const logged = await connection.xlen(eventLogKey(PREFIX));
    if (logged !== events) throw new Error(`subscriptions: the event log holds ${logged} entries for ${events} deliveries`);

    // Polled from before the server starts: the fan-out begins as soon as it listens.
    const timeoutMs = Math.max(120_000, events * subscriptionCount);
    const timing = (async (): Promise<{ startMs: number; doneMs: number }> => {
      let startMs = Date.now();
      for (const deadline = Date.now() + timeoutMs; polling && Date.now() < deadline; await sleep(POLL_MS)) {
        const sentAtMs = Date.now();
        const lengths = await waitingLengths(connection, keys);
        if (Math.min(...lengths) >= events) return { startMs, doneMs: Date.now() };
        if (lengths.every((length) => length === 0)) startMs = sentAtMs;
      }
      throw new Error(`subscriptions: the fan-out did not hand ${events} events to ${subscriptionCount} queues within ${timeoutMs} ms`);
    })();
    // Awaited below; a server that fails to start must not leave it rejected unhandled meanwhile.
    timing.catch(() => undefined);
    const redisCpuBefore = processCpuMs(redis.pid);
    server = (await startSubscribedServer(connection, redis.url, dir, subscriptions)).server;
    const serverCpuBefore = (await server.call<ServerStats>('stats')).cpuMs;
    const { startMs, doneMs } = await timing;
    const seconds = (doneMs - startMs) / 1000;
    const jobs = events * subscriptionCount;
    const serverCpuMs = (await server.call<ServerStats>('stats')).cpuMs - serverCpuBefore;
    const redisCpuAfter = processCpuMs(redis.pid);
    return {
      events,
      subscriptions: subscriptionCount,
      perSec: (events * subscriptionCount) / seconds,
      seconds,
      fewestHeld: Math.min(...(await waitingLengths(connection, keys))),
      dropped: Object.values(await connection.hgetall(subscriptionDroppedKey(PREFIX))).reduce((sum, n) => sum + Number(n), 0),
      cpuUsPerJob: {
        server: (serverCpuMs * 1000) / jobs,
        ...(redisCpuBefore === undefined || redisCpuAfter === undefined ? {} : { redis: ((redisCpuAfter - redisCpuBefore) * 1000) / jobs }),
      },
    };
  } finally {
    polling = false;
    await server?.close();
    connection.disconnect();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
