import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { GeohookConfig } from '../config/load-config.js';
import type { EventQueue } from '../queue/event-queue.js';
import type { RedisTarget } from '../redis/connection.js';
import type { HookKeys } from '../signature/hook-keys.js';

/** Options of `startBackground`: what the receiver already holds. */
export interface BackgroundOptions {
  config: GeohookConfig;
  /** The receiver's queues: where backfilled and polled events go, and whose watermarks the passes move. */
  eventQueue: EventQueue;
  /** The receiver's keys, which registration fills with the keys it generates. */
  hookKeys: HookKeys;
  /** The registry `/metrics` serves: the webhooks' health gauges join it. */
  metricsRegistry: Registry;
  /** The Redis the events are in; the background work opens its own connections to it. */
  redisTarget: RedisTarget;
  logger: Logger;
}
