import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { SubscriptionConfig } from '../../../src/config/subscription-schema.js';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { subscriptionQueueName } from '../../../src/queue/names.js';
import { fanoutLeaseKey, subscriptionsKey } from '../../../src/redis/keys.js';
import { Child } from '../ipc.js';
import { BENCH_SECRET, WEBHOOK_PATH } from '../payloads.js';

/** The BullMQ prefix of every run of the section (each on a redis-server of its own). */
export const PREFIX = 'bench-subs';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `count` subscriptions that each take every GP delivery of the bench: half of them `gp.*`, the other half every
 * family (`gp.*`, `feature.*`, `change.*`), as applications that want everything declare it.
 */
export function benchSubscriptions(count: number): SubscriptionConfig[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `app-${String(i).padStart(2, '0')}`,
    types: i % 2 === 0 ? ['gp.*'] : ['gp.*', 'feature.*', 'change.*'],
  }));
}

/** The wait lists of the subscriptions' queues: where their events are until a worker takes them. */
export const waitListKeys = (subscriptions: readonly SubscriptionConfig[]): string[] =>
  subscriptions.map(({ name }) => `${PREFIX}:${subscriptionQueueName(name)}:wait`);

/** The events waiting in each subscription's queue (all it was handed, with no worker), read in one pipeline. */
export async function waitingLengths(redis: Redis, keys: readonly string[]): Promise<number[]> {
  const replies = (await redis.pipeline(keys.map((key) => ['llen', key])).exec()) ?? [];
  return replies.map(([err, length]) => (err === null ? Number(length) : 0));
}

/**
 * geohook's server (`startServer`, fan-out included) in a process of its own with `subscriptions` declared in
 * GEOHOOK_CONFIG; resolves once it has made them in Redis and holds the fan-out's lease, with its webhook URL.
 */
export async function startSubscribedServer(
  redis: Redis,
  redisUrl: string,
  dir: string,
  subscriptions: readonly SubscriptionConfig[],
): Promise<{ server: Child<{ url: string }>; webhookUrl: string }> {
  const config = join(dir, `geohook-${subscriptions.length}.json`);
  writeFileSync(config, JSON.stringify({ subscriptions }));
  const env = {
    REDIS_URL: redisUrl,
    HOST: '127.0.0.1',
    PORT: String(await findFreePort()),
    GEOHOOK_PREFIX: PREFIX,
    GEOHOOK_CONFIG: config,
    HOOK_SECRETS: BENCH_SECRET,
    LOG_LEVEL: 'silent',
  };
  const server = await Child.start<{ url: string }>('geohook server', 'workers/geohook-server.js', { args: [JSON.stringify(env)] });
  const deadline = Date.now() + 30_000;
  while ((await redis.hlen(subscriptionsKey(PREFIX))) < subscriptions.length || (await redis.exists(fanoutLeaseKey(PREFIX))) === 0) {
    if (Date.now() > deadline) {
      await server.close();
      throw new Error(`subscriptions: geohook made no ${subscriptions.length} subscriptions or took no fan-out lease within 30 s`);
    }
    await sleep(20);
  }
  return { server, webhookUrl: `http://127.0.0.1:${env.PORT}${WEBHOOK_PATH}` };
}
