import { resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { adminAuthFor } from './arcgis/online-admin.js';
import { parseServiceName } from './arcgis/service-name.js';
import { startBackfill } from './backfill/backfill-worker.js';
import { checkGenerations } from './backfill/generation-check.js';
import { startPoller } from './backfill/poller.js';
import type { GeohookConfig } from './config/load-config.js';
import { REGISTERED_HOOK, wantsRegistration } from './config/self-registration.js';
import { serviceLocatorOf } from './config/service-locator.js';
import { lockDataDir } from './embedded/dir-lock.js';
import { EMBEDDED_REDIS_DIR } from './embedded/recorded-redis-url.js';
import { RedisServer } from './embedded/redis-server.js';
import { createAlertSender } from './health/alert-sender.js';
import { UpstreamHealth } from './health/upstream-health.js';
import { createLogger } from './logger.js';
import { buildReceiver } from './receiver/build-receiver.js';
import { configuredTarget, connectRedis, createProducerConnection, hasConfiguredRedis, type RedisTarget } from './redis/connection.js';
import { createRegistration } from './registration/create-registration.js';
import type { Registration } from './registration/registration.js';

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /** Where log lines go: stdout for `serve`, stderr for `up` (whose stdout carries events). @defaultValue 1 */
  logDestination?: 1 | 2;
  /** Data directory of the embedded redis-server; its URL is recorded there while it runs. @defaultValue './.geohook/redis' */
  embeddedRedisDir?: string;
  /** A pino logger to use instead of one writing to `logDestination`. */
  logger?: Logger;
  /** The level of the receiver's per-request log lines. @defaultValue 'info' */
  requestLogLevel?: 'info' | 'debug';
}

/** A listening receiver and what it started. */
export interface RunningServer {
  app: FastifyInstance;
  logger: Logger;
  /** The embedded redis-server, when REDIS_URL was unset. */
  redis: RedisServer | undefined;
  /** The Redis the events are in: the configured one or the embedded server. */
  redisTarget: RedisTarget;
  /** Self-registration, when ADMIN_URL and REGISTER are set. */
  registration: Registration | undefined;
  /** Stops registration and accepting, finishes in-flight requests, closes the queues and Redis, stops the embedded Redis. */
  close(): Promise<void>;
}

/**
 * Starts the receiver: an embedded redis-server (AOF on) when the configuration names no Redis, the receiver on
 * `config.host:config.port`, ready once Redis answers and, when ADMIN_URL and REGISTER are set, once
 * self-registration has succeeded (it runs in the background, retried with backoff, healed on an interval).
 */
export async function startServer(config: GeohookConfig, options: StartServerOptions = {}): Promise<RunningServer> {
  const logger =
    options.logger ??
    createLogger({
      level: config.logLevel,
      signatureHeaders: config.signatureHeaders,
      format: config.logFormat ?? 'json',
      fd: options.logDestination ?? 1,
    });
  let redis: RedisServer | undefined;
  let redisUrl = config.redisUrl;
  const embeddedDir = resolve(options.embeddedRedisDir ?? EMBEDDED_REDIS_DIR);
  let unlockDataDir = (): void => undefined;
  if (!hasConfiguredRedis(config)) {
    unlockDataDir = lockDataDir(embeddedDir);
    if (await RedisServer.stopLeftover(embeddedDir))
      logger.warn({ dir: embeddedDir }, 'shut down the embedded redis-server a killed geohook left running');
    // Strict durability on the embedded server: it fsyncs every write before it answers.
    redis = new RedisServer({ dir: embeddedDir, appendOnly: true, appendFsync: config.durability === 'strict' ? 'always' : 'everysec' });
    try {
      await redis.start();
    } catch (err) {
      unlockDataDir();
      throw err;
    }
    redisUrl = redis.url;
    logger.info({ redisUrl }, 'embedded redis-server started');
  }
  const stopEmbedded = async (): Promise<void> => {
    if (redis === undefined) return;
    await redis.stop();
    unlockDataDir();
  };
  let registration: Registration | undefined;
  const readinessChecks = wantsRegistration(config)
    ? [() => (registration === undefined ? 'registration pending' : registration.notReadyReason())]
    : [];
  const redisTarget = configuredTarget(config, redisUrl);
  const app = await buildReceiver({
    config: { ...config, redisUrl },
    loggerInstance: logger,
    readinessChecks,
    ...(options.requestLogLevel === undefined ? {} : { requestLogLevel: options.requestLogLevel }),
  });
  // Registration, upstream health and alerts: a connection of their own.
  const registrationRedis = wantsRegistration(config) || config.alertUrl !== undefined ? createProducerConnection(redisTarget) : undefined;
  // Outages are logged by the receiver's connection; registration sees them as failed commands and retries.
  registrationRedis?.on('error', () => undefined);
  try {
    await app.eventQueue.ready();
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    registrationRedis?.disconnect();
    await stopEmbedded();
    throw err;
  }
  // Blocking reads: a connection of its own, retried for as long as Redis is away.
  const backfillRedis = connectRedis(redisTarget, { maxRetriesPerRequest: null });
  backfillRedis.on('error', () => undefined);
  // One credentials object, so that the backfill and the watermark checks share its tokens.
  const adminAuth = config.admin && adminAuthFor(config.admin.url, config.admin.auth);
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
  const backfill = startBackfill({
    connection: backfillRedis,
    prefix: config.prefix,
    eventQueue: app.eventQueue,
    ...(adminAuth === undefined ? {} : { auth: adminAuth }),
    serviceLocator: serviceLocatorOf(config),
    logger,
    ...(alert === undefined
      ? {}
      : {
          // Polled ranges are the normal course of poll mode, not gaps worth an alert.
          onFilled: ({ scope, serverGens, types, source }) => {
            if (source !== 'backfill') return;
            const text = `geohook: backfilled the edits of ${scope} in server generations (${serverGens[0]}, ${serverGens[1]}]`;
            void alert({ event: 'gap.backfilled', service: scope, serverGens, types, text });
          },
        }),
  });
  const poller =
    config.admin === undefined || config.admin.poll.length === 0
      ? undefined
      : startPoller({
          eventQueue: app.eventQueue,
          hook: REGISTERED_HOOK,
          adminUrl: config.admin.url,
          ...(adminAuth === undefined ? {} : { auth: adminAuth }),
          services: config.admin.poll,
          intervalMs: config.admin.pollIntervalSeconds * 1000,
          logger,
        });
  let health: UpstreamHealth | undefined;
  if (registrationRedis !== undefined && wantsRegistration(config)) {
    const adminUrl = config.admin!.url;
    health = new UpstreamHealth({
      redis: registrationRedis,
      prefix: config.prefix,
      hook: REGISTERED_HOOK,
      backfillQueue: () => app.eventQueue.backfillQueue(),
      ...(alert === undefined ? {} : { alert }),
      logger,
    });
    health.registerMetrics(app.metricsRegistry);
    const upstream = health;
    const generations = {
      eventQueue: app.eventQueue,
      hook: REGISTERED_HOOK,
      adminUrl,
      ...(adminAuth === undefined ? {} : { auth: adminAuth }),
    };
    registration = createRegistration(config, {
      hookKeys: app.hookKeys,
      redis: registrationRedis,
      logger,
      // Each pass records the webhooks' health and brings the watermarks of the feature services up to date:
      // what a deactivated webhook missed is backfilled, then the alert says it recovered (also when the pass that
      // reactivated it failed after that, and a later one completes).
      onRegistered: async (service, outcome, client) => {
        await upstream.observe(service, outcome, client);
        if (parseServiceName(service).type === 'FeatureServer') await checkGenerations(service, generations);
        await upstream.confirmRecovery(service, outcome.id);
      },
    });
    // Its fail-fast connection refuses commands until it is connected: the first pass waits for it, so that
    // start-up does not log a spurious failure (a Redis that is down is still reported and retried).
    const started = registration;
    const start = (): void => {
      started?.start();
      // Deliveries were refused while Redis was away: a pass on its return backfills what the server gave up on.
      registrationRedis.on('ready', () => started?.passNow());
    };
    if (registrationRedis.status === 'ready') start();
    else registrationRedis.once('ready', start);
  }
  return {
    app,
    logger,
    redis,
    redisTarget,
    registration,
    async close() {
      await registration?.close();
      await health?.close();
      await poller?.close();
      // Forced: BullMQ's graceful close can wait forever on a blocking connection that reconnected after a Redis
      // restart (taskforcesh/bullmq#4656). A gap being filled is picked up again, and its event is the same.
      await backfill.close(true);
      backfillRedis.disconnect();
      await registrationRedis?.quit().catch(() => registrationRedis.disconnect());
      await app.close();
      await stopEmbedded();
      logger.info('geohook stopped');
      logger.flush();
    },
  };
}
