import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { changeEventsQueueName } from '../changes/change-event.js';
import { changesQueueName } from '../changes/change-queues.js';
import { readChangesStatus } from '../changes/changes-status.js';
import type { GeohookConfig } from '../config/load-config.js';
import { REGISTERED_HOOK } from '../config/self-registration.js';
import { createMirrorStatusReader } from '../mirror/mirror-status.js';
import { subscriptionQueueName } from '../queue/names.js';
import { openQueue } from '../queue/open-queue.js';
import { readServiceReports } from '../queue/service-report.js';
import type { RedisClient } from '../redis/connection.js';
import { readFailingServices } from '../redis/failing-services.js';
import { RelayDryRunner } from '../relay/dry-run.js';
import { relayQueueName } from '../relay/relay-queues.js';
import { readRelayStatus } from '../relay/relay-status.js';
import { SubscriptionRegistry } from '../subscriptions/subscription-registry.js';
import { readSubscriptionStatus } from '../subscriptions/subscription-status.js';
import { dashboard } from './dashboard.js';

/**
 * Mounts the dashboard at `/ui` on a receiver that has not started yet, with what its views read: the services'
 * reports, change events, relay routes, subscriptions and the PostGIS mirror, all on the receiver's Redis
 * `connection`. Closing the receiver closes the queues and the mirror reader it opened.
 */
export async function mountDashboard(app: FastifyInstance, config: GeohookConfig, connection: RedisClient): Promise<void> {
  if (config.dashboard === undefined) return;
  // Beside the event queues, the board lists the change queues of the services followed, each relay route's queue
  // (its dead letters are its failed jobs), and each subscription's, read again on each call of its API as
  // subscriptions are made and deleted at run time. A queue is opened when the board first lists it.
  const changes = (config.admin?.changes.services.length ?? 0) > 0;
  const boardQueueNames = [
    ...(changes ? [changesQueueName, changeEventsQueueName] : []),
    ...config.relays.map((route) => relayQueueName(route.name)),
  ];
  const subscriptions = new SubscriptionRegistry(connection, config.prefix);
  const boardQueues = new Map<string, Queue>();
  const boardQueue = (name: string): Queue => {
    let queue = boardQueues.get(name);
    if (queue === undefined)
      boardQueues.set(name, (queue = openQueue(name, { connection, prefix: config.prefix, skipWaitingForReady: true })));
    return queue;
  };
  const queues = async (): Promise<readonly Queue[]> => {
    const subscriptionNames = (await subscriptions.list()).map((subscription) => subscriptionQueueName(subscription.name));
    return [...boardQueueNames, ...subscriptionNames].map(boardQueue);
  };
  app.addHook('onClose', async () => {
    await Promise.all([...boardQueues.values()].map((queue) => queue.close()));
  });
  const mirrorUrl = config.mirror?.databaseUrl;
  const mirror =
    mirrorUrl === undefined || config.mirror === undefined || config.admin === undefined
      ? undefined
      : createMirrorStatusReader({
          databaseUrl: mirrorUrl,
          schema: config.mirror.schema,
          redis: connection,
          prefix: config.prefix,
          hook: REGISTERED_HOOK,
          adminUrl: config.admin.url,
        });
  if (mirror !== undefined) app.addHook('onClose', () => mirror.close());
  // Behind a proxy that terminates TLS the request is plain HTTP, but the browser's page is https.
  await app.register(dashboard, {
    prefix: '/ui',
    auth: config.dashboard.auth,
    changes: config.dashboard.changes,
    eventQueue: app.eventQueue,
    queues,
    // The recent events list the change events and each relay route's tries beside the deliveries.
    recentQueues: () => [
      ...(changes ? [{ queue: boardQueue(changeEventsQueueName) }] : []),
      ...config.relays.map((route) => ({ queue: boardQueue(relayQueueName(route.name)), route: route.name })),
    ],
    services: () => readServiceReports(connection, config.prefix),
    failing: () => readFailingServices(connection, config.prefix, REGISTERED_HOOK),
    changeEvents: () => readChangesStatus(connection, config.prefix),
    relays: () => readRelayStatus(connection, config.prefix, config.relays),
    relayDryRun: new RelayDryRunner(connection, config.prefix, config.relays),
    subscriptions: () => readSubscriptionStatus(connection, config.prefix, subscriptions, config.subscriptionBacklog),
    ...(mirror === undefined ? {} : { mirror: () => mirror.read() }),
    staleAfterMs: 3 * config.registration.intervalSeconds * 1000,
    secureCookie: config.publicUrl.startsWith('https://'),
  });
}
