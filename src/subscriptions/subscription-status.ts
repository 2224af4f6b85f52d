import type { BacklogLimits } from '../config/subscription-schema.js';
import { readFanoutLagMs } from '../fanout/fanout-lag.js';
import { subscriptionQueueName } from '../queue/names.js';
import { openQueue } from '../queue/open-queue.js';
import type { RedisClient } from '../redis/connection.js';
import { subscriptionDroppedKey } from '../redis/keys.js';
import { backlogOf } from './subscription-destinations.js';
import { subscriptionDestinationName, type SubscriptionRegistry } from './subscription-registry.js';

/** One subscription as `geohook subscriptions list --json` prints it (docs/subscriptions.md#status). */
export interface SubscriptionStatus {
  name: string;
  types: readonly string[];
  services?: readonly string[] | undefined;
  where?: string | undefined;
  changed?: readonly string[] | undefined;
  origin: 'config' | 'runtime';
  createdAt: string;
  /** Events waiting for a worker. */
  waiting: number;
  /** Events a worker is handling. */
  active: number;
  /** Events waiting to be tried again after a failure. */
  retrying: number;
  /** Events whose tries are used up: in the failed set until replayed. */
  failed: number;
  /** The same as `failed`: what a dashboard calls them. */
  deadLetters: number;
  /** Events handled (kept for `completedJobs`). */
  completed: number;
  /** Events dropped past the backlog cap. */
  dropped: number;
  /**
   * How long the oldest event it has not had has waited, seconds (0 with none): in its queue, or in the event log
   * while the fan-out yields to saturated acknowledgements (docs/subscriptions.md#during-a-burst).
   */
  lagSeconds: number;
  backlog: { count: number; ageSeconds: number };
}

/** Every subscription's definition and counts. */
export async function readSubscriptionStatus(
  redis: RedisClient,
  prefix: string,
  registry: SubscriptionRegistry,
  defaults: BacklogLimits,
): Promise<SubscriptionStatus[]> {
  const now = Date.now();
  const [definitions, dropped, fanoutLagMs] = await Promise.all([
    registry.list(),
    redis.hgetall(subscriptionDroppedKey(prefix)),
    readFanoutLagMs(redis, prefix, now),
  ]);
  return Promise.all(
    definitions.map(async (definition) => {
      const queue = openQueue(subscriptionQueueName(definition.name), { connection: redis, prefix, skipWaitingForReady: true });
      try {
        const [counts, oldest] = await Promise.all([
          queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed'),
          redis.lindex(queue.toKey('wait'), -1),
        ]);
        const addedMs = oldest === null ? null : Number(await redis.hget(queue.toKey(oldest), 'timestamp'));
        return {
          name: definition.name,
          types: definition.types,
          ...(definition.services === undefined ? {} : { services: definition.services }),
          ...(definition.where === undefined ? {} : { where: definition.where }),
          ...(definition.changed === undefined ? {} : { changed: definition.changed }),
          origin: definition.origin,
          createdAt: definition.createdAt,
          waiting: counts.waiting ?? 0,
          active: counts.active ?? 0,
          retrying: counts.delayed ?? 0,
          failed: counts.failed ?? 0,
          deadLetters: counts.failed ?? 0,
          completed: counts.completed ?? 0,
          dropped: Number(dropped[subscriptionDestinationName(definition.name)] ?? 0),
          lagSeconds: Math.max(fanoutLagMs, addedMs === null || !Number.isFinite(addedMs) ? 0 : now - addedMs) / 1000,
          backlog: backlogOf(definition, defaults),
        };
      } finally {
        await queue.close();
      }
    }),
  );
}
