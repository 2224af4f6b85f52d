import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { RelayRouteConfig } from '../config/relay-schema.js';
import { isStreamFormat } from '../config/stream-schema.js';
import type { Destination } from '../fanout/destination.js';
import type { RoutedEvent } from '../fanout/routed-event.js';
import type { RedisClient } from '../redis/connection.js';
import type { DeliveryOutcome } from '../relay/deliver.js';
import { relayQueueName } from '../relay/relay-queues.js';
import { createRelayRoute } from '../relay/relay-route.js';
import { RelayStats } from '../relay/relay-stats.js';
import { createAmqpPublisher } from './amqp-publisher.js';
import { createNatsPublisher } from './nats-publisher.js';
import type { StreamPublisher } from './stream-publisher.js';
import { startStreamWorker } from './stream-worker.js';

/** Options of {@link startStreams}. */
export interface StreamsOptions {
  /** The relay routes of GEOHOOK_CONFIG: those of format `nats` or `amqp` are started here. */
  routes: readonly RelayRouteConfig[];
  /** Blocking reads: a connection that waits for Redis (`maxRetriesPerRequest: null`); the caller closes it. */
  connection: RedisClient;
  prefix: string;
  /** `completedJobs` of GEOHOOK_CONFIG: how long published events' jobs are kept (a re-add of one meanwhile is a no-op). */
  completedJobs: { readonly ageSeconds: number; readonly count: number };
  logger: Logger;
  onOutcome?: (route: string, outcome: DeliveryOutcome) => void;
  onDeadLetter?: (route: string, job: Job<RoutedEvent>, err: Error) => void;
  onFailing?: (route: string, failing: number, lastError: string) => void;
  /** The publisher of a route (tests and the bench wrap one). @defaultValue NATS JetStream or RabbitMQ, by its format */
  publisherOf?: (route: RelayRouteConfig, logger: Logger) => StreamPublisher;
}

/** Running stream routes: their destinations for the fan-out, and their lanes. */
export interface Streams {
  destinations: readonly Destination[];
  close(): Promise<void>;
}

const defaultPublisher = (route: RelayRouteConfig, logger: Logger): StreamPublisher =>
  route.format === 'nats' ? createNatsPublisher(route, logger) : createAmqpPublisher(route, logger);

/**
 * Stream routes (docs/streams.md): relay routes of format `nats` or `amqp`. Each is one more destination of the
 * fan-out (its queue `relay-<name>`, so `geohook relay status` and `replay` read it as any route's) with a lane of
 * its own that publishes events side by side, each feature's in order (`startStreamWorker`).
 */
export function startStreams(options: StreamsOptions): Streams {
  const { connection, prefix, logger } = options;
  const configs = options.routes.filter((route) => isStreamFormat(route.format));
  const stats = new RelayStats({ redis: connection, prefix, ...(options.onFailing === undefined ? {} : { onFailing: options.onFailing }) });
  const publisherOf = options.publisherOf ?? defaultPublisher;
  const lanes = configs.map((config) => {
    const route = createRelayRoute(config);
    const lane = startStreamWorker({
      route,
      publisher: publisherOf(config, logger),
      connection,
      prefix,
      stats,
      logger,
      ...(options.onOutcome === undefined ? {} : { onOutcome: options.onOutcome }),
      ...(options.onDeadLetter === undefined ? {} : { onDeadLetter: options.onDeadLetter }),
    });
    const destination: Destination = {
      name: `relay:${route.name}`,
      queue: relayQueueName(route.name),
      matches: route.matches,
      // One try per job: the lane tries again in place (the job stays first in line); a failed job is a dead letter.
      jobOptions: {
        attempts: 1,
        removeOnComplete: { age: options.completedJobs.ageSeconds, count: options.completedJobs.count },
        removeOnFail: false,
      },
    };
    return { lane, destination };
  });
  if (configs.length > 0) logger.info({ routes: configs.map(({ name, format }) => `${name} (${format})`) }, 'publishing events to streams');
  return {
    destinations: lanes.map(({ destination }) => destination),
    async close() {
      await Promise.all(lanes.map(({ lane }) => lane.close()));
      await stats.close();
    },
  };
}
