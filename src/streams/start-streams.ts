import type { Logger } from 'pino';
import type { RelayRouteConfig } from '../config/relay-schema.js';
import { isStreamFormat } from '../config/stream-schema.js';
import type { Destination } from '../fanout/destination.js';
import type { LogReader } from '../fanout/log-readers.js';
import type { RedisClient } from '../redis/connection.js';
import { streamLaneGroup } from '../redis/keys.js';
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
  /** A connection that waits for Redis (`maxRetriesPerRequest: null`); the caller closes it (each lane blocks on a duplicate). */
  connection: RedisClient;
  prefix: string;
  /** `completedJobs` of GEOHOOK_CONFIG: how long the jobs of replayed events are kept once published. */
  completedJobs: { readonly ageSeconds: number; readonly count: number };
  logger: Logger;
  onOutcome?: (route: string, outcome: DeliveryOutcome) => void;
  onDeadLetter?: (route: string, event: { id: string }, err: Error) => void;
  onFailing?: (route: string, failing: number, lastError: string) => void;
  /** The publisher of a route (tests and the bench wrap one). @defaultValue NATS JetStream or RabbitMQ, by its format */
  publisherOf?: (route: RelayRouteConfig, logger: Logger) => StreamPublisher;
}

/** Running stream routes: their lanes, which read the event log themselves (the fan-out keeps it for them). */
export interface Streams {
  readers: readonly LogReader[];
  close(): Promise<void>;
}

const defaultPublisher = (route: RelayRouteConfig, logger: Logger): StreamPublisher =>
  route.format === 'nats' ? createNatsPublisher(route, logger) : createAmqpPublisher(route, logger);

/**
 * Stream routes (docs/streams.md): relay routes of format `nats` or `amqp`. Each is a destination that reads the event
 * log itself, through a consumer group the fan-out makes and keeps the log for: a lane of its own that publishes
 * events side by side, each feature's in order (`startStreamWorker`). Its dead letters are failed jobs of its queue
 * `relay-<name>`, so `geohook relay status` and `replay` read it as any route's.
 */
export function startStreams(options: StreamsOptions): Streams {
  const { connection, prefix, logger } = options;
  const configs = options.routes.filter((route) => isStreamFormat(route.format));
  const stats = new RelayStats({ redis: connection, prefix, ...(options.onFailing === undefined ? {} : { onFailing: options.onFailing }) });
  const publisherOf = options.publisherOf ?? defaultPublisher;
  const lanes = configs.map((config) => {
    const route = createRelayRoute(config);
    // What the route takes, and its dead letters' jobs: one try each (the lane tries again in place), kept until replayed.
    const destination: Destination = {
      name: `relay:${route.name}`,
      queue: relayQueueName(route.name),
      matches: route.matches,
      jobOptions: {
        attempts: 1,
        removeOnComplete: { age: options.completedJobs.ageSeconds, count: options.completedJobs.count },
        removeOnFail: false,
      },
    };
    const lane = startStreamWorker({
      route,
      destination,
      publisher: publisherOf(config, logger),
      connection,
      prefix,
      stats,
      logger,
      ...(options.onOutcome === undefined ? {} : { onOutcome: options.onOutcome }),
      ...(options.onDeadLetter === undefined ? {} : { onDeadLetter: options.onDeadLetter }),
    });
    return { lane, reader: { name: destination.name, group: streamLaneGroup(route.name) } };
  });
  if (configs.length > 0) logger.info({ routes: configs.map(({ name, format }) => `${name} (${format})`) }, 'publishing events to streams');
  return {
    readers: lanes.map(({ reader }) => reader),
    async close() {
      await Promise.all(lanes.map(({ lane }) => lane.close()));
      await stats.close();
    },
  };
}
