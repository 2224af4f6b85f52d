import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { adminAuthFor } from '../arcgis/online-admin.js';
import { startChanges, type Changes } from '../changes/start-changes.js';
import { servicesWithoutEdits } from '../config/followed-services.js';
import { mirrorServerOf } from '../config/mirror-schema.js';
import { REGISTERED_HOOK, wantsRegistration } from '../config/self-registration.js';
import { serviceLocatorOf } from '../config/service-locator.js';
import { createAlertSender, type AlertSender } from '../health/alert-sender.js';
import { createMirrorMetrics } from '../mirror/mirror-metrics.js';
import { startMirror, type Mirror } from '../mirror/start-mirror.js';
import { connectRedis, createProducerConnection, type RedisClient } from '../redis/connection.js';
import type { Registration } from '../registration/registration.js';
import { createAttachmentLinker, loadAttachmentLinkKey, redisLinkExpiries } from '../signature/attachment-linker.js';
import type { BackgroundOptions } from './background-options.js';
import { startOutputs, type Outputs } from './start-outputs.js';
import { startRecovery } from './start-recovery.js';

/** What {@link startBackground} started. */
export interface Background {
  /** Self-registration, when ADMIN_URL and REGISTER are set. */
  registration: Registration | undefined;
  /** Change events, when CHANGES is set. */
  changes: Changes | undefined;
  /** The PostGIS mirror, when MIRROR or MIRROR_DATABASE_URL is set. */
  mirror: Mirror | undefined;
  /** The fan-out, relay routes and subscriptions. */
  outputs: Outputs;
  /** Stops all of it, and closes its connections. */
  close(): Promise<void>;
}

/**
 * What runs beside the receiver once it listens, on connections of its own: where events go beyond their queue
 * (`startOutputs`: the fan-out, relay routes, subscriptions), change events and the PostGIS mirror, which follow the
 * watermarks, and recovery (`startRecovery`: the backfill, the poll, the registration passes), with the alerts of
 * ALERT_URL that they share.
 */
export function startBackground(options: BackgroundOptions): Background {
  const { config, logger } = options;
  // Registration, upstream health and alerts: a connection of their own. Outages are logged by the receiver's
  // connection; registration sees them as failed commands and retries.
  const registrationRedis =
    wantsRegistration(config) || config.alertUrl !== undefined ? createProducerConnection(options.redisTarget) : undefined;
  registrationRedis?.on('error', () => undefined);
  // Blocking reads: a connection of their own, retried for as long as Redis is away.
  const backfillRedis = connectRedis(options.redisTarget, { maxRetriesPerRequest: null });
  backfillRedis.on('error', () => undefined);
  // One credentials object, so that the backfill, the poll, the watermark checks, change events and the mirror
  // share its tokens.
  const auth = config.admin && adminAuthFor(config.admin.url, config.admin.auth);
  const alert =
    config.alertUrl === undefined || registrationRedis === undefined
      ? undefined
      : createAlertSender({
          url: config.alertUrl,
          debounceMs: config.alertDebounceSeconds * 1000,
          redis: registrationRedis,
          prefix: config.prefix,
          logger,
        });
  const outputs = startOutputs(options, alert);
  for (const service of servicesWithoutEdits(config)) {
    logger.warn(
      { service },
      'CHANGES/MIRROR: neither REGISTER nor POLL names this service: only a webhook registered by other means brings its edits (add it to REGISTER or POLL)',
    );
  }
  const changes = startChangeEvents(options, backfillRedis, auth, alert);
  const mirror = startPostgisMirror(options, backfillRedis, auth);
  const recovery = startRecovery(options, { registrationRedis, backfillRedis, auth, alert });
  return {
    registration: recovery.registration,
    changes,
    mirror,
    outputs,
    async close() {
      await recovery.close();
      await changes?.close();
      await outputs.close();
      await mirror?.close();
      backfillRedis.disconnect();
      await registrationRedis?.quit().catch(() => registrationRedis.disconnect());
    },
  };
}

/** Change events of the services of `CHANGES`, when there are any (docs/changes.md). */
function startChangeEvents(
  { config, eventQueue, logger }: BackgroundOptions,
  connection: RedisClient,
  auth: ResolvedAdminAuth | undefined,
  alert: AlertSender | undefined,
): Changes | undefined {
  if (config.admin === undefined || config.admin.changes.services.length === 0) return undefined;
  const links = Object.values(config.admin.changes.byService).some((settings) => settings.attachments === 'link');
  return startChanges({
    connection,
    prefix: config.prefix,
    hook: REGISTERED_HOOK,
    adminUrl: config.admin.url,
    services: config.admin.changes.services,
    track: config.admin.changes.track,
    byService: config.admin.changes.byService,
    ...(auth === undefined ? {} : { auth }),
    serviceLocator: serviceLocatorOf(config),
    dedupMs: config.dedupRetentionSeconds * 1000,
    jobOptions: eventQueue.jobOptions,
    logger,
    ...(alert === undefined ? {} : { alert }),
    ...(links
      ? {
          attachmentLink: createAttachmentLinker({
            key: () => loadAttachmentLinkKey(connection, config.prefix),
            expiries: redisLinkExpiries(connection, config.prefix),
            ...config.attachmentLinks,
          }),
        }
      : {}),
  });
}

/** The PostGIS mirror of the services of `MIRROR`, when there are any (docs/mirror.md). */
function startPostgisMirror(
  { config, logger, metricsRegistry }: BackgroundOptions,
  connection: RedisClient,
  auth: ResolvedAdminAuth | undefined,
): Mirror | undefined {
  if (config.mirror === undefined) return undefined;
  const { adminUrl, databaseUrl } = mirrorServerOf(config.mirror, config.admin?.url);
  return startMirror({
    connection,
    prefix: config.prefix,
    hook: REGISTERED_HOOK,
    adminUrl,
    services: config.mirror.services,
    databaseUrl,
    schema: config.mirror.schema,
    ...(auth === undefined ? {} : { auth }),
    serviceLocator: serviceLocatorOf(config),
    logger,
    metrics: createMirrorMetrics(metricsRegistry),
    attachments: {
      services: Object.entries(config.admin?.changes.byService ?? {})
        .filter(([, settings]) => (settings.attachments ?? 'none') !== 'none')
        .map(([service]) => service),
      keepBytes: config.mirror.attachmentBytes,
    },
  });
}
