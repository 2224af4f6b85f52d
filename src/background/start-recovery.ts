import type { Logger } from 'pino';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { isOnlineAdminRoot } from '../arcgis/online-admin.js';
import { isPattern, parseServiceName } from '../arcgis/service-name.js';
import { startBackfill, type BackfillOptions } from '../backfill/backfill-worker.js';
import { createCatalogueGate, type CatalogueGate } from '../backfill/catalogue-gate.js';
import { checkGenerations } from '../backfill/generation-check.js';
import { startPoller, type Poller } from '../backfill/poller.js';
import { createServiceCatalogue } from '../backfill/service-catalogue.js';
import type { GeohookConfig } from '../config/load-config.js';
import { REGISTERED_HOOK, wantsRegistration } from '../config/self-registration.js';
import { serviceLocatorOf } from '../config/service-locator.js';
import type { AlertSender } from '../health/alert-sender.js';
import { UpstreamHealth } from '../health/upstream-health.js';
import type { RedisClient } from '../redis/connection.js';
import { catalogueReader } from '../registration/catalogue-reader.js';
import { createRegistration } from '../registration/create-registration.js';
import { registerRegistrationMetrics } from '../registration/registration-metrics.js';
import type { Registration } from '../registration/registration.js';
import type { BackgroundOptions } from './background-options.js';

/** What recovery shares with the rest of the background work: connections, credentials and alerts. */
export interface RecoveryShared {
  /** Registration's, upstream health's and the alerts' connection, when REGISTER or ALERT_URL is set. */
  registrationRedis: RedisClient | undefined;
  /** The blocking reads' connection, retried for as long as Redis is away. */
  backfillRedis: RedisClient;
  /** One credentials object, so that the backfill, the poll and the watermark checks share its tokens. */
  auth: ResolvedAdminAuth | undefined;
  alert: AlertSender | undefined;
}

/** What {@link startRecovery} started. */
export interface Recovery {
  /** Self-registration, when ADMIN_URL and REGISTER are set. */
  registration: Registration | undefined;
  /** Stops the passes, the poll and the backfill; the connections are the caller's. */
  close(): Promise<void>;
}

/**
 * Never miss an edit (docs/backfill.md): the backfill worker that fills gaps; with ADMIN_URL, the poll of
 * `POLL`; with REGISTER, self-registration whose every pass (at start-up, on its interval, and each time Redis
 * comes back, since deliveries were refused meanwhile) records each webhook's health, brings the feature
 * services' watermarks up to the server's generations (what a deactivated webhook missed becomes a gap), and
 * then says the webhook recovered; with ALERT_URL, the alerts of gaps and deactivations.
 */
export function startRecovery(options: BackgroundOptions, shared: RecoveryShared): Recovery {
  const { config, eventQueue, logger } = options;
  const { registrationRedis, backfillRedis, auth, alert } = shared;
  const catalogue = catalogueGateOf(config, logger);
  const backfill = startBackfill({
    connection: backfillRedis,
    prefix: config.prefix,
    eventQueue,
    ...(auth === undefined ? {} : { auth }),
    serviceLocator: serviceLocatorOf(config),
    ...(catalogue === undefined ? {} : { catalogue }),
    logger,
    concurrency: config.backfill.concurrency,
    fillTimeoutMs: config.backfill.timeoutSeconds * 1000,
    ...(alert === undefined ? {} : { onFilled: gapAlerts(alert) }),
  });
  const poller = startPoll(options, auth);
  const passes = registrationRedis === undefined ? undefined : startPasses(options, registrationRedis, auth, alert);
  return {
    registration: passes?.registration,
    async close() {
      await passes?.registration?.close();
      await passes?.health.close();
      await poller?.close();
      // Forced: BullMQ's graceful close can wait forever on a blocking connection that reconnected after a Redis
      // restart (taskforcesh/bullmq#4656). A gap being filled is picked up again, and its event is the same.
      await backfill.close(true);
    },
  };
}

/**
 * What decides which services under ADMIN_URL's site the backfill reads (docs/backfill.md#services-geohook-reads):
 * those REGISTER or POLL name, and those the server's findServices lists (ArcGIS Enterprise; ArcGIS Online has none).
 */
function catalogueGateOf(config: GeohookConfig, logger: Logger): CatalogueGate | undefined {
  const { admin } = config;
  if (admin === undefined || isOnlineAdminRoot(admin.url)) return undefined;
  const list = catalogueReader(admin.url, admin.auth);
  return createCatalogueGate({
    adminUrl: admin.url,
    known: [...admin.register.filter((entry) => !isPattern(entry)), ...admin.poll],
    catalogue: createServiceCatalogue({ list, logger: logger.child({ component: 'backfill' }) }),
  });
}

/** An alert for each backfilled gap; polled ranges are the normal course of poll mode, not gaps worth one. */
function gapAlerts(alert: AlertSender): NonNullable<BackfillOptions['onFilled']> {
  return ({ scope, serverGens, types, source }) => {
    if (source !== 'backfill') return;
    const text = `geohook: backfilled the edits of ${scope} in server generations (${serverGens[0]}, ${serverGens[1]}]`;
    void alert({ event: 'gap.backfilled', service: scope, serverGens, types, text });
  };
}

/** The poll of the services of `POLL`, when there are any. */
function startPoll({ config, eventQueue, logger }: BackgroundOptions, auth: ResolvedAdminAuth | undefined): Poller | undefined {
  if (config.admin === undefined || config.admin.poll.length === 0) return undefined;
  return startPoller({
    eventQueue,
    hook: REGISTERED_HOOK,
    adminUrl: config.admin.url,
    ...(auth === undefined ? {} : { auth }),
    services: config.admin.poll,
    intervalMs: config.admin.pollIntervalSeconds * 1000,
    logger,
  });
}

/**
 * Self-registration and its passes, with the webhooks' health: each pass records a webhook's state, checks the
 * generations of a feature service (what a deactivated webhook missed is backfilled), then confirms the recovery
 * (also when the pass that reactivated it failed after that, and a later one completes).
 */
function startPasses(
  options: BackgroundOptions,
  redis: RedisClient,
  auth: ResolvedAdminAuth | undefined,
  alert: AlertSender | undefined,
): { registration: Registration | undefined; health: UpstreamHealth } | undefined {
  const { config, eventQueue, logger } = options;
  if (config.admin === undefined || !wantsRegistration(config)) return undefined;
  const health = new UpstreamHealth({
    redis,
    prefix: config.prefix,
    hook: REGISTERED_HOOK,
    backfillQueue: () => eventQueue.backfillQueue(),
    ...(alert === undefined ? {} : { alert }),
    logger,
  });
  health.registerMetrics(options.metricsRegistry);
  const generations = { eventQueue, hook: REGISTERED_HOOK, adminUrl: config.admin.url, ...(auth === undefined ? {} : { auth }) };
  const registration = createRegistration(config, {
    hookKeys: options.hookKeys,
    redis,
    logger,
    onRegistered: async (service, outcome, client) => {
      await health.observe(service, outcome, client);
      if (parseServiceName(service).type === 'FeatureServer') await checkGenerations(service, generations);
      await health.confirmRecovery(service, outcome.id);
    },
    onCheckFailed: (service, err) => health.checkFailed(service, err),
  });
  if (registration !== undefined) registerRegistrationMetrics(options.metricsRegistry, () => registration.summary());
  // Its fail-fast connection refuses commands until it is connected: the first pass waits for it, so that start-up
  // does not log a spurious failure (a Redis that is down is still reported and retried).
  const start = (): void => {
    registration?.start();
    // Deliveries were refused while Redis was away: a pass on its return backfills what the server gave up on.
    redis.on('ready', () => registration?.passNow());
  };
  if (redis.status === 'ready') start();
  else redis.once('ready', start);
  return { registration, health };
}
