import type { Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { RelayRouteConfig } from '../config/relay-schema.js';
import { isStreamFormat } from '../config/stream-schema.js';
import type { Destination } from '../fanout/destination.js';
import type { RedisClient } from '../redis/connection.js';
import { relayJobOptions, relayQueueName } from './relay-queues.js';
import { createRelayRoute } from './relay-route.js';
import { RelayStats } from './relay-stats.js';
import { createRelayTransport } from './relay-transport.js';
import { startRelayWorker, type RelayWorkerOptions } from './relay-worker.js';

/** Options of {@link startRelays}. */
export interface RelaysOptions {
  /** The relay routes of GEOHOOK_CONFIG: those that POST (a `nats` or `amqp` route is `startStreams`'). */
  routes: readonly RelayRouteConfig[];
  /** Blocking reads: a connection that waits for Redis (`maxRetriesPerRequest: null`); the caller closes it. */
  connection: RedisClient;
  prefix: string;
  /** `completedJobs` of GEOHOOK_CONFIG: how long delivered jobs are kept. */
  completedJobs: { readonly ageSeconds: number; readonly count: number };
  logger: Logger;
  /** Tries in flight at once per route. @defaultValue 64 */
  concurrency?: number;
  /** The HTTP client of every route. @defaultValue a keep-alive pool of undici's (`createRelayTransport`) */
  fetch?: RelayWorkerOptions['fetch'];
  onOutcome?: RelayWorkerOptions['onOutcome'];
  onDeadLetter?: RelayWorkerOptions['onDeadLetter'];
  onFailing?: (route: string, failing: number, lastError: string) => void;
}

/** Running relays: the routes as the fan-out's destinations, and their workers. */
export interface Relays {
  destinations: readonly Destination[];
  close(): Promise<void>;
}

/**
 * Relays (docs/relays.md): a queue and a worker per configured route; the fan-out (`startFanout`) fills the queues,
 * each route being one of its destinations.
 */
export function startRelays(options: RelaysOptions): Relays {
  const { connection, prefix, logger } = options;
  const routes = options.routes.filter((route) => !isStreamFormat(route.format)).map(createRelayRoute);
  const stats = new RelayStats({ redis: connection, prefix, ...(options.onFailing === undefined ? {} : { onFailing: options.onFailing }) });
  const transport = options.fetch === undefined ? createRelayTransport() : undefined;
  const fetch = options.fetch ?? transport!.fetch;
  const workers: Worker[] = routes.map((route) =>
    startRelayWorker({
      route,
      connection,
      prefix,
      stats,
      logger,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      fetch,
      ...(options.onOutcome === undefined ? {} : { onOutcome: options.onOutcome }),
      ...(options.onDeadLetter === undefined ? {} : { onDeadLetter: options.onDeadLetter }),
    }),
  );
  logger.info({ routes: routes.map((route) => route.name) }, 'relaying events');
  return {
    destinations: routes.map((route) => ({
      name: `relay:${route.name}`,
      queue: relayQueueName(route.name),
      matches: route.matches,
      jobOptions: relayJobOptions(route, options.completedJobs),
    })),
    async close() {
      // Forced, as the backfill worker is closed: a try cut short is tried again, under the same webhook-id.
      await Promise.all(workers.map((worker) => worker.close(true)));
      await stats.close();
      await transport?.close();
    },
  };
}
