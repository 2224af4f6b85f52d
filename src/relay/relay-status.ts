import type { Queue } from 'bullmq';
import type { RelayRouteConfig } from '../config/relay-schema.js';
import { isStreamFormat } from '../config/stream-schema.js';
import { laneBacklog } from '../fanout/log-readers.js';
import { openQueue } from '../queue/open-queue.js';
import type { RedisClient } from '../redis/connection.js';
import { eventLogKey, relayStatsKey, streamLaneGroup } from '../redis/keys.js';
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
  /**
   * Events waiting for a try, a first or a retry. A stream route's also counts the entries of the event log its lane
   * has not read yet, whether or not its filter takes them.
   */
  pending: number;
  lastError: string | undefined;
  lastErrorAt: string | undefined;
  lastDeliveredAt: string | undefined;
  /** When the route's next retry is due (the earliest of its events waiting for another try); none when none waits. */
  nextTryAt: string | undefined;
}

/** BullMQ scores its delayed set by due time × 0x1000 (and a counter below it). */
const DELAYED_SCORE_SCALE = 0x1000;

/** When the earliest delayed job of `queue` is due, as an ISO time; undefined when none is delayed. */
async function nextTryAt(connection: RedisClient, queue: Queue): Promise<string | undefined> {
  const [, score] = await connection.zrange(queue.keys.delayed!, '0', '0', 'WITHSCORES');
  return score === undefined ? undefined : new Date(Math.floor(Number(score) / DELAYED_SCORE_SCALE)).toISOString();
}

/**
 * Every configured route's counts (the stats hash) and queue (pending jobs, dead letters, when the next retry is
 * due): what `geohook relay status` and the dashboard's relays show.
 */
export async function readRelayStatus(
  connection: RedisClient,
  prefix: string,
  routes: readonly RelayRouteConfig[],
): Promise<{ routes: RelayRouteStatus[] }> {
  return {
    routes: await Promise.all(
      routes.map(async (route): Promise<RelayRouteStatus> => {
        const queue = openQueue(relayQueueName(route.name), { connection, prefix });
        try {
          const [stats, counts, next, inLog] = await Promise.all([
            connection.hgetall(relayStatsKey(prefix, route.name)),
            queue.getJobCounts('failed', 'waiting', 'delayed', 'active', 'prioritized'),
            nextTryAt(connection, queue),
            isStreamFormat(route.format) ? laneBacklog(connection, eventLogKey(prefix), streamLaneGroup(route.name)) : 0,
          ]);
          return {
            name: route.name,
            format: route.format,
            delivered: Number(stats.delivered ?? 0),
            failing: Number(stats.failing ?? 0),
            deadLetters: counts.failed ?? 0,
            pending: (counts.waiting ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0) + (counts.prioritized ?? 0) + inLog,
            lastError: stats.lastError,
            lastErrorAt: stats.lastErrorAt,
            lastDeliveredAt: stats.lastDeliveredAt,
            nextTryAt: next,
          };
        } finally {
          await queue.close();
        }
      }),
    ),
  };
}
