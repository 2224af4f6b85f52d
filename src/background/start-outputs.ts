import { setTimeout as sleep } from 'node:timers/promises';
import { startFanout } from '../fanout/start-fanout.js';
import type { AlertSender } from '../health/alert-sender.js';
import { connectRedis, type RedisClient } from '../redis/connection.js';
import { createRelayAlerts } from '../relay/relay-alerts.js';
import { registerRelayMetrics } from '../relay/relay-metrics.js';
import { startRelays, type Relays } from '../relay/start-relays.js';
import { startStreams, type Streams } from '../streams/start-streams.js';
import { startLagWatch } from '../subscriptions/lag-watch.js';
import { subscriptionDestinations } from '../subscriptions/subscription-destinations.js';
import { registerSubscriptionMetrics } from '../subscriptions/subscription-metrics.js';
import { SubscriptionRegistry } from '../subscriptions/subscription-registry.js';
import { readSubscriptionStatus } from '../subscriptions/subscription-status.js';
import type { BackgroundOptions } from './background-options.js';

/** What {@link startOutputs} started. */
export interface Outputs {
  /** Why the receiver is not ready yet: the subscriptions of GEOHOOK_CONFIG not made (events stored before would miss them). */
  notReadyReason(): string | undefined;
  close(): Promise<void>;
}

/**
 * Where events go beyond their family's queue (docs/subscriptions.md): the fan-out, the relay routes' workers, the
 * subscriptions of GEOHOOK_CONFIG (made in Redis, retried until Redis takes them), their metrics and lag alerts.
 */
export function startOutputs(options: BackgroundOptions, alert: AlertSender | undefined): Outputs {
  const { config, eventQueue, logger, metricsRegistry } = options;
  // Relay tries auto-pipelined (a try's BullMQ commands of one tick go in one write: about a fifth more tries per
  // second on the same CPU); the fan-out on a connection of its own, which blocks on the log while idle.
  const connection = connectRedis(options.redisTarget, { maxRetriesPerRequest: null, enableAutoPipelining: true });
  const fanoutConnection = connectRedis(options.redisTarget, { maxRetriesPerRequest: null });
  for (const redis of [connection, fanoutConnection]) redis.on('error', () => undefined);
  const relays = config.relays.length === 0 ? undefined : startRelayRoutes(options, connection, alert);
  const registry = new SubscriptionRegistry(connection, config.prefix);
  let closed = false;
  let made = config.subscriptions.length === 0;
  // The subscriptions of the config, made (or brought up to their definition) once Redis takes them.
  const declared = (async () => {
    while (!made && !closed) {
      try {
        const outcomes = await Promise.all(config.subscriptions.map((subscription) => registry.create(subscription, { origin: 'config' })));
        outcomes.forEach((outcome, index) => {
          if (outcome === 'exists')
            logger.warn(
              { subscription: config.subscriptions[index]!.name },
              'subscriptions: one of this name was made at run time: it is kept as it is',
            );
        });
        made = true;
      } catch (err) {
        if (closed) return;
        logger.warn({ err }, 'subscriptions of GEOHOOK_CONFIG not made yet: retrying');
        await sleep(1000);
      }
    }
  })();
  const fanout = startFanout({
    connection: fanoutConnection,
    prefix: config.prefix,
    routes: relays?.destinations ?? [],
    readers: relays?.readers ?? [],
    subscriptions: subscriptionDestinations(registry, { jobOptions: eventQueue.jobOptions, backlog: config.subscriptionBacklog }),
    retentionMs: config.eventLog.retentionSeconds * 1000,
    // Acks first: this receiver's acknowledgements at capacity hold the fan-out back, up to the bound.
    saturated: () => eventQueue.saturated(),
    maxLagMs: config.eventLog.maxLagSeconds * 1000,
    logger,
  });
  const read = () => readSubscriptionStatus(connection, config.prefix, registry, config.subscriptionBacklog);
  registerSubscriptionMetrics(metricsRegistry, read);
  const watch = startLagWatch({ read, ...(alert === undefined ? {} : { alert }), logger });
  return {
    notReadyReason: () => (made ? undefined : 'the subscriptions of GEOHOOK_CONFIG are not made yet'),
    async close() {
      closed = true;
      watch.close();
      await fanout.close();
      await relays?.close();
      fanoutConnection.disconnect();
      connection.disconnect();
      await declared;
    },
  };
}

/** The relay routes of GEOHOOK_CONFIG (docs/relays.md), streams among them (docs/streams.md), with their metrics and alerts. */
function startRelayRoutes(
  { config, logger, metricsRegistry }: BackgroundOptions,
  connection: RedisClient,
  alert: AlertSender | undefined,
): Relays & Pick<Streams, 'readers'> {
  const metrics = registerRelayMetrics(metricsRegistry);
  const alerts = alert === undefined ? undefined : createRelayAlerts({ redis: connection, prefix: config.prefix, alert });
  const common = {
    routes: config.relays,
    connection,
    prefix: config.prefix,
    completedJobs: config.completedJobs,
    logger,
    onOutcome: metrics.onOutcome,
    onDeadLetter: (route: string, event: { id?: string | undefined }, err: Error) => {
      metrics.onDeadLetter(route);
      alerts?.deadLetter(route, event.id, err.message);
    },
    ...(alerts === undefined ? {} : { onFailing: alerts.failing }),
  };
  const relays = startRelays(common);
  const streams: Streams = startStreams(common);
  return {
    destinations: relays.destinations,
    readers: streams.readers,
    async close() {
      await Promise.all([relays.close(), streams.close()]);
    },
  };
}
