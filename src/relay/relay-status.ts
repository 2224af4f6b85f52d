import { Queue } from 'bullmq';
import type { RelayRouteConfig } from '../config/relay-schema.js';
import type { RedisClient } from '../redis/connection.js';
import { relayStatsKey } from '../redis/keys.js';
import { relayQueueName } from './relay-queues.js';

/** Where one route stands (`geohook relay status`). */
export interface RelayRouteStatus {
  name: string;
  format: string;
  /** Tries the route took (2xx), since its counts began. */
  delivered: number;
  /** Failed tries in a row since its last delivery. */
  failing: number;
  /** Events that used every try: its dead letters, until replayed. */
  deadLetters: number;
  /** Events waiting for a try, a first or a retry. */
  pending: number;
  lastError: string | undefined;
  lastErrorAt: string | undefined;
  lastDeliveredAt: string | undefined;
}

/** Every configured route's counts (the stats hash) and queue (pending jobs, dead letters). */
export async function readRelayStatus(
  connection: RedisClient,
  prefix: string,
  routes: readonly RelayRouteConfig[],
): Promise<{ routes: RelayRouteStatus[] }> {
  return {
    routes: await Promise.all(
      routes.map(async (route): Promise<RelayRouteStatus> => {
        const queue = new Queue(relayQueueName(route.name), { connection, prefix });
        try {
          const [stats, counts] = await Promise.all([
            connection.hgetall(relayStatsKey(prefix, route.name)),
            queue.getJobCounts('failed', 'waiting', 'delayed', 'active', 'prioritized'),
          ]);
          return {
            name: route.name,
            format: route.format,
            delivered: Number(stats.delivered ?? 0),
            failing: Number(stats.failing ?? 0),
            deadLetters: counts.failed ?? 0,
            pending: (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0) + (counts.prioritized ?? 0),
            lastError: stats.lastError,
            lastErrorAt: stats.lastErrorAt,
            lastDeliveredAt: stats.lastDeliveredAt,
          };
        } finally {
          await queue.close();
        }
      }),
    ),
  };
}
