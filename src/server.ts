import { resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { backgroundReadiness } from './background/background-readiness.js';
import { startBackground, type Background } from './background/start-background.js';
import type { GeohookConfig } from './config/load-config.js';
import { warnPlainHttp } from './config/plain-http.js';
import { lockDataDir } from './embedded/dir-lock.js';
import { EMBEDDED_REDIS_DIR } from './embedded/recorded-redis-url.js';
import { RedisServer } from './embedded/redis-server.js';
import { listenFailure } from './errors.js';
import { checkConfiguredFilters, filtersError } from './fanout/configured-filters.js';
import { createLogger } from './logger.js';
import { configuredTarget, createProducerConnection, hasConfiguredRedis, type RedisTarget } from './redis/connection.js';
import { firstAttempt, onceReady } from './redis/first-attempt.js';
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
  /** Self-registration, when ADMIN_URL and REGISTER are set, once Redis has answered. */
  readonly registration: Registration | undefined;
  /** True once Redis has answered: what runs beside the receiver has started then. */
  redisAnswered(): boolean;
  /** Stops registration and accepting, finishes in-flight requests, closes the queues and Redis, stops the embedded Redis. */
  close(): Promise<void>;
}

/**
 * The relay routes' and subscriptions' filters checked against the followed layers (docs/relays.md#filters): a filter
 * that cannot match stops start-up; a service that cannot be read now is said, and its filters are not checked.
 */
async function checkFilters(config: GeohookConfig, logger: Logger): Promise<void> {
  const { issues, unread } = await checkConfiguredFilters(config);
  for (const { service, error } of unread)
    logger.warn(
      { service, err: error },
      'filters: the layer definitions could not be read, so the filters of this service are not checked',
    );
  if (issues.length > 0) throw filtersError(issues);
}

/**
 * Starts the receiver: an embedded redis-server (AOF on) when the configuration names no Redis, the receiver on
 * `config.host:config.port`, ready once Redis answers and, when ADMIN_URL and REGISTER are set, once
 * self-registration has succeeded; then, once Redis answers (waited for as in an outage; a refused password stops
 * start-up), what runs beside it (`startBackground`: the outputs, change events, the mirror, and recovery:
 * backfill, poll, registration passes). Closes in the reverse order.
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
  warnPlainHttp(config, logger);
  await checkFilters(config, logger);
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
  // Started once the receiver listens and Redis answers (it makes queues and subscriptions there); /readyz asks for it from the start.
  let background: Background | undefined = undefined;
  const redisTarget = configuredTarget(config, redisUrl);
  const connection = createProducerConnection(redisTarget);
  const attempt = firstAttempt(connection);
  const app = await buildApp({
    config: { ...config, redisUrl },
    connection,
    loggerInstance: logger,
    readinessChecks: backgroundReadiness(config, () => background),
    readinessDetails: () => (background?.registration === undefined ? undefined : { registration: background.registration.summary() }),
    ...(options.requestLogLevel === undefined ? {} : { requestLogLevel: options.requestLogLevel }),
  }).catch(async (err: unknown) => {
    // Nothing listens: the connection (whose first attempt then matters no more) and the embedded Redis go too.
    attempt.catch(() => undefined);
    connection.disconnect();
    await stopEmbedded();
    throw err;
  });
  try {
    // A refused password stops start-up; a Redis that does not answer yet may come (the receiver says so and waits).
    await attempt;
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    connection.disconnect();
    await stopEmbedded();
    throw listenFailure(err, 'the receiver', `${config.host}:${config.port}`, 'PORT (or --port)');
  }
  const { eventQueue, hookKeys, metricsRegistry } = app;
  const cancelBackground = onceReady(connection, () => {
    background = startBackground({ config, eventQueue, hookKeys, metricsRegistry, redisTarget, logger });
  });
  return {
    app,
    logger,
    redis,
    redisTarget,
    get registration() {
      return background?.registration;
    },
    redisAnswered: () => background !== undefined,
    async close() {
      cancelBackground();
      await background?.close();
      await app.close();
      await connection.quit().catch(() => connection.disconnect());
      await stopEmbedded();
      logger.info('geohook stopped');
      logger.flush();
    },
  };
}
