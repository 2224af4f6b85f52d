import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { fastify } from '../commonjs/fastify.js';
import type { GeohookConfig, ReceiverTimeouts } from '../config/load-config.js';
import { REGISTERED_HOOK, wantsRegistration } from '../config/self-registration.js';
import { serviceLocatorOf } from '../config/service-locator.js';
import { GeohookError, QueueUnavailableError } from '../errors.js';
import { createLoggerOptions, requestLogController } from '../logger.js';
import { EventQueue } from '../queue/event-queue.js';
import { PingLog } from '../queue/ping-log.js';
import { describeConnection } from '../redis/auth-refusal.js';
import { watchCredentials } from '../redis/connection-state.js';
import { configuredTarget, createProducerConnection, hasConfiguredRedis, type RedisClient } from '../redis/connection.js';
import { HookKeys } from '../signature/hook-keys.js';
import { clientErrorHandler } from './client-error.js';
import { capConnections, enforceFirstRequestDeadlines } from './connection-guards.js';
import { sendError, sendNotFound, toGeohookError } from './error-reply.js';
import { healthRoutes } from './health-routes.js';
import { startKeyReload } from './key-reloader.js';
import { createReceiverMetrics } from './metrics.js';
import { createRefusalLog, type RefusalLog } from './refusal-log.js';
import { webhookRoutes } from './webhook-route.js';

/** Options of {@link buildReceiver}. */
export interface ReceiverOptions {
  /** Validated configuration (`loadConfig`). It must name a Redis (REDIS_URL, sentinels or a cluster) unless `connection` is given. */
  config: GeohookConfig;
  /**
   * A producer connection to use instead of one made from the configuration; the caller closes it.
   * It should fail fast (`enableOfflineQueue: false`), as `createProducerConnection` makes them.
   */
  connection?: RedisClient;
  /** A pino logger to use instead of one made from `config.logLevel`. */
  loggerInstance?: FastifyBaseLogger;
  /** Further readiness conditions for `/readyz`: each returns a reason while not ready. */
  readinessChecks?: ReadonlyArray<() => string | undefined>;
  /** What `/readyz` adds to its answer, ready or not (self-registration's services). */
  readinessDetails?: () => Record<string, unknown> | undefined;
  /** The level of the per-request log lines ("incoming request", "request completed", "delivery accepted"). @defaultValue 'info' */
  requestLogLevel?: 'info' | 'debug';
  /**
   * Called once the receiver's routes are registered, with its Redis connection, to add routes of its own before the
   * receiver is returned: how `geohook serve` mounts the dashboard (`src/app.ts`). @defaultValue nothing
   */
  mount?: (app: FastifyInstance, connection: RedisClient) => Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The queues the receiver enqueues to. */
    eventQueue: EventQueue;
    /** The signature keys of each hook: configured ones plus those generated at registration. */
    hookKeys: HookKeys;
    /** The registry `/metrics` serves; consumers in the same process may add theirs to it. */
    metricsRegistry: Registry;
  }
}

/**
 * Logs a Redis outage once when it starts and once when it ends (ioredis reports every retry), the end with how many
 * requests were refused since Redis was last connected (`refused`); a Redis not connected yet the same way, with
 * where it is (never its password).
 */
function watchConnection(connection: RedisClient, log: FastifyBaseLogger, refusals: RefusalLog): void {
  let connected = connection.status === 'ready';
  let down = false;
  const onError = (err: Error): void => {
    if (down) return;
    down = true;
    if (connected) log.warn({ err }, 'Redis connection lost: deliveries are answered 503 until it is back');
    else
      log.warn(
        { redis: describeConnection(connection), reason: err.message },
        'Redis not connected yet: the receiver waits for it, and answers /readyz and deliveries 503 until it connects (check REDIS_URL and that Redis is up)',
      );
  };
  const onReady = (): void => {
    const first = !connected;
    connected = true;
    if (!down) return;
    down = false;
    log.info({ refused: refusals.takeCount() }, first ? 'Redis connected' : 'Redis connection restored');
  };
  connection.on('error', onError).on('ready', onReady);
}

/**
 * Fastify's options for `timeouts`. Node enforces the headers and request timeouts only when it checks its
 * connections, every 30 s by default, so a client could hold a connection up to 30 s past either; the
 * check runs every tenth of the headers timeout instead (1 s by default), a scan of the open connections.
 * Node counts both from a request's first byte: {@link enforceFirstRequestDeadlines} counts the first
 * request's from the connection.
 */
function serverTimeouts(timeouts: ReceiverTimeouts) {
  return {
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.socketIdleMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: Math.min(1000, Math.ceil(timeouts.headersMs / 10)),
    },
  };
}

/**
 * Builds the receiver as a Fastify instance, without listening. Closing the instance finishes in-flight
 * requests, then closes the queues and the Redis connection it opened.
 */
export async function buildReceiver(options: ReceiverOptions): Promise<FastifyInstance> {
  const { config } = options;
  if (options.connection === undefined && !hasConfiguredRedis(config)) {
    throw new GeohookError('GEOHOOK_ERR_CONFIG', 'REDIS_URL: required by buildReceiver (or pass a connection)');
  }
  const connection = options.connection ?? createProducerConnection(configuredTarget(config));
  const loggerOptions = createLoggerOptions({ level: config.logLevel, signatureHeaders: config.signatureHeaders });
  const app = fastify({
    ...(options.loggerInstance === undefined ? { logger: loggerOptions } : { loggerInstance: options.loggerInstance }),
    logController: requestLogController(options.requestLogLevel ?? 'info'),
    bodyLimit: config.maxBodyBytes,
    ...serverTimeouts(config.timeouts),
    return503OnClosing: true,
    clientErrorHandler,
  });
  const eventQueue = new EventQueue({
    connection,
    prefix: config.prefix,
    dedupRetentionSeconds: config.dedupRetentionSeconds,
    enqueueTimeoutMs: config.enqueueTimeoutMs,
    completedJobs: config.completedJobs,
    retry: config.retry,
    durability: config.durability,
    ...(config.spoolDir === undefined ? {} : { spoolDir: config.spoolDir }),
    log: app.log,
  });
  const metrics = createReceiverMetrics(eventQueue);
  capConnections(app.server, config.maxConnections, app.log, () => metrics.connectionsDropped.inc());
  enforceFirstRequestDeadlines(app.server, config.timeouts);
  app.decorate('eventQueue', eventQueue);
  app.decorate('metricsRegistry', metrics.registry);
  const refusals = createRefusalLog(app.log);
  watchConnection(connection, app.log, refusals);
  watchCredentials(connection);
  const hookKeys = new HookKeys({ hooks: config.hooks, prefix: config.prefix });
  app.decorate('hookKeys', hookKeys);
  // Keys generated by an earlier registration (by this replica or another) verify from the start, and a
  // rotation's changes within keyReloadSeconds.
  let stopKeyReload = (): void => undefined;
  const loadKeys = async (): Promise<void> => {
    await hookKeys
      .load(connection, config.enqueueTimeoutMs)
      .catch((err: unknown) => app.log.warn({ err }, 'generated signature keys not loaded from Redis'));
    if (!config.requireSignature) return;
    for (const name of config.hooks.keys()) {
      // Self-registration generates the registered hook's key when none is configured.
      if (name === REGISTERED_HOOK && wantsRegistration(config)) continue;
      if (hookKeys.get(name)?.secrets.length === 0) {
        app.log.warn(
          { hook: name },
          'hook has no signature key: its deliveries are refused until it has one (HOOK_SECRETS, or generated by self-registration) or REQUIRE_SIGNATURE=false',
        );
      }
    }
  };
  // Loaded as the receiver starts listening, or once Redis first connects when it is not connected yet.
  const loadKeysOnConnect = (): void => void loadKeys();
  app.addHook('onReady', async () => {
    if (connection.status === 'ready') await loadKeys();
    else connection.once('ready', loadKeysOnConnect);
    stopKeyReload = startKeyReload(hookKeys, connection, config.keyReloadSeconds * 1000, app.log);
  });

  // Requests still in flight when closing begins end their connection with the response, so that close
  // does not wait for the clients' keep-alive timeouts.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  app.setNotFoundHandler(sendNotFound);
  app.setErrorHandler((err, request, reply) => {
    const error = toGeohookError(err as Parameters<typeof toGeohookError>[0]);
    if (error instanceof QueueUnavailableError) refusals(error);
    else if (error.statusCode >= 500) request.log.error({ err }, 'request failed');
    return sendError(reply, error);
  });

  await app.register(webhookRoutes, {
    hooks: config.hooks,
    hookKeys,
    policy: { requireSignature: config.requireSignature, signatureHeaders: config.signatureHeaders },
    maxBodyBytes: config.maxBodyBytes,
    eventQueue,
    serviceLocator: serviceLocatorOf(config),
    pings: new PingLog(connection, config.prefix),
    metrics,
    refusals,
    // The per-request lines at debug (`geohook up` for a person): its printer says each event in one line.
    acceptedLogLevel: options.requestLogLevel ?? 'info',
  });
  await app.register(healthRoutes, {
    connection,
    registry: metrics.registry,
    readinessChecks: [() => eventQueue.durabilityIssue(), ...(options.readinessChecks ?? [])],
    ...(options.readinessDetails === undefined ? {} : { readinessDetails: options.readinessDetails }),
    ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken }),
  });
  if (options.mount !== undefined) await options.mount(app, connection);

  app.addHook('onClose', async () => {
    stopKeyReload();
    connection.off('ready', loadKeysOnConnect);
    await eventQueue.close();
    if (options.connection === undefined) await connection.quit().catch(() => connection.disconnect());
  });
  return app;
}
