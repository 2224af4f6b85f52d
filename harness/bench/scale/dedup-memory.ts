import { createHmac } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../../../src/config/load-config.js';
import { scopeOf } from '../../../src/events/tracked-ranges.js';
import { buildReceiver } from '../../../src/receiver/build-receiver.js';
import { startRedis } from '../redis.js';

/** Options of {@link measureDedupBytes}. */
export interface DedupMemoryOptions {
  /** Deliveries measured per case (as many again go first, to fill what is bounded regardless of them). */
  events: number;
}

/** Redis memory an event still holds once consumed, bytes. */
export interface DedupMemory {
  /** Signed feature deliveries whose ranges of server generations chain (`serverGens` `[g, g+1]`, then `[g+1, g+2]`). */
  bytesPerConsumedEvent: number;
  /** The same deliveries without `serverGens` (a service without change tracking): a dedup key each. */
  bytesPerConsumedEventUnranged: number;
}

const SECRET = 'bench-dedup-memory-secret-key-AAAAAAAAAAAA';
const SITE = 'https://gis.bench.test/server';
const SERVICE_URL = `${SITE}/rest/services/Scale/Svc00000/FeatureServer`;
const FIRST_GEN = 1_700_000_000_000;
/** Completed jobs kept: bounded, and reached by the first half of the deliveries. */
const COMPLETED_KEPT = 1000;
/** Deliveries in flight at once. */
const CONCURRENCY = 32;

/** A signed ArcGIS Enterprise feature delivery (test/fixtures/enterprise-feature-created.json's shape) of `(gen, gen+1]`. */
function deliveryOf(gen: number, ranged: boolean): { body: string; signature: string } {
  const changesUrl = `${SERVICE_URL}/extractChanges${ranged ? `?serverGens=%5B${gen},${gen + 1}%5D` : ''}`;
  const body = JSON.stringify({
    serviceType: 'FeatureServer',
    changesUrl,
    name: 'geohook',
    id: 'c4a7db24-0c5e-4a00-9103-000000000000',
    folderName: 'Scale',
    serviceName: 'Svc00000',
    events: [{ eventType: 'FeaturesCreated', when: gen }],
  });
  return { body, signature: `sha256=${createHmac('sha256', SECRET).update(body).digest('base64')}` };
}

const usedMemory = async (redis: Redis): Promise<number> => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

/**
 * Bytes of Redis memory each consumed event keeps, for one case on a fresh prefix of `redisUrl`.
 *
 * Method: a receiver (`buildReceiver`, in process) takes `2 × events` distinct signed deliveries of one service, sent
 * in order 32 at a time (a few overtake each other, as on a busy service), and a BullMQ worker consumes them all. `used_memory` is read once the first `events` are consumed and
 * again once the rest are: the difference divided by the events stored meanwhile (deliveries answered `duplicate`
 * are not) is what each consumed event keeps. What is bounded
 * regardless of the count (the completed jobs kept, 1,000 here; the events streams, ~10,000 entries; the hashes
 * of one service) is full before the first reading, so it cancels out. The service's server generation is read
 * first (as a registration pass does), so that ranges count at once.
 */
async function measureCase(redisUrl: string, prefix: string, events: number, ranged: boolean): Promise<number> {
  const config = loadConfig({
    REDIS_URL: redisUrl,
    GEOHOOK_PREFIX: prefix,
    HOOK_SECRETS: SECRET,
    TRUSTED_ORIGINS: SITE,
    LOG_LEVEL: 'silent',
  });
  const app = await buildReceiver({ config: { ...config, completedJobs: { ageSeconds: 86_400, count: COMPLETED_KEPT } } });
  const redis = new Redis(redisUrl);
  let consumed = 0;
  // Deliveries stored as new: those the worker must consume (a repeat, or a range handed over already, is not).
  let stored = 0;
  const worker = new Worker('feature-events', async () => void consumed++, { connection: { url: redisUrl }, prefix, concurrency: 50 });
  try {
    await app.eventQueue.ready();
    const scope = scopeOf('default', 'Scale/Svc00000.FeatureServer');
    const lastGen = FIRST_GEN + 2 * events;
    await app.eventQueue.confirm('default', [{ scope, from: lastGen, to: lastGen, serviceUrl: SERVICE_URL }]);
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    let next = FIRST_GEN;
    const send = async (until: number): Promise<void> => {
      // Each lane takes the next generation when it is free: ranges leave in order, at most CONCURRENCY in flight.
      const lane = async (): Promise<void> => {
        while (next < until) {
          const { body, signature } = deliveryOf(next++, ranged);
          const response = await fetch(`${address}/webhooks/default`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-esriHook-Signature': signature },
            body,
          });
          if (response.status !== 202) throw new Error(`delivery answered ${response.status}: ${await response.text()}`);
          if (!((await response.json()) as { duplicate: boolean }).duplicate) stored++;
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    };
    const settle = async (): Promise<number> => {
      const queue = app.eventQueue.queue('feature-events');
      for (;;) {
        const { waiting = 0, active = 0 } = await queue.getJobCounts('waiting', 'active');
        if (consumed >= stored && waiting + active === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Completed jobs past the count kept are removed as the worker completes later ones; wait for the bound.
      for (;;) {
        const { completed = 0 } = await queue.getJobCounts('completed');
        if (completed <= COMPLETED_KEPT) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return usedMemory(redis);
    };
    await send(FIRST_GEN + events);
    const before = await settle();
    const storedBefore = stored;
    await send(FIRST_GEN + 2 * events);
    const after = await settle();
    return (after - before) / (stored - storedBefore);
  } finally {
    await worker.close();
    await app.close();
    redis.disconnect();
  }
}

/**
 * Redis memory per consumed event, on a redis-server of its own: signed feature deliveries with chained ranges
 * (a repeat is answered by the watermarks: no dedup key), and the same without ranges (a dedup key each).
 */
export async function measureDedupBytes(options: DedupMemoryOptions): Promise<DedupMemory> {
  const redis = await startRedis('fast');
  try {
    const bytesPerConsumedEvent = await measureCase(redis.url, 'dedupranged', options.events, true);
    const bytesPerConsumedEventUnranged = await measureCase(redis.url, 'geohook', options.events, false);
    return { bytesPerConsumedEvent, bytesPerConsumedEventUnranged };
  } finally {
    await redis.stop();
  }
}
