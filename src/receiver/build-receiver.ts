import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { GeohookConfig } from '../config/load-config.js';
import { GeohookError } from '../errors.js';
import { createLoggerOptions } from '../logger.js';
import { createProducerConnection } from '../queue/connection.js';
import { EventQueue } from '../queue/event-queue.js';
import { sendError, toGeohookError } from './error-reply.js';
import { healthRoutes } from './health-routes.js';
import { createReceiverMetrics } from './metrics.js';
import { webhookRoutes } from './webhook-route.js';

/** Options of {@link buildReceiver}. */
export interface ReceiverOptions {
  /** Validated configuration (`loadConfig`). `redisUrl` is required unless `connection` is given. */
  config: GeohookConfig;
  /**
   * A producer connection to use instead of one made from `config.redisUrl`; the caller closes it.
   * It should fail fast (`enableOfflineQueue: false`), as `createProducerConnection` makes them.
   */
  connection?: Redis;
  /** A pino logger to use instead of one made from `config.logLevel`. */
  loggerInstance?: FastifyBaseLogger;
  /** Further readiness conditions for `/readyz`: each returns a reason while not ready. */
  readinessChecks?: ReadonlyArray<() => string | undefined>;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The queues the receiver enqueues to. */
    eventQueue: EventQueue;
  }
}

/** Logs a Redis outage once when it starts and once when it ends (ioredis reports every retry). */
function watchConnection(connection: Redis, log: FastifyBaseLogger): void {
  let down = false;
  const onError = (err: Error): void => {
    if (down) return;
    down = true;
    log.warn({ err }, 'Redis connection lost: deliveries are answered 503 until it is back');
  };
  const onReady = (): void => {
    if (!down) return;
    down = false;
    log.info('Redis connection restored');
  };
  connection.on('error', onError).on('ready', onReady);
}

/**
 * Builds the receiver as a Fastify instance, without listening. Closing the instance finishes in-flight
 * requests, then closes the queues and the Redis connection it opened.
 */
export async function buildReceiver(options: ReceiverOptions): Promise<FastifyInstance> {
  const { config } = options;
  if (options.connection === undefined && config.redisUrl === undefined) {
    throw new GeohookError('GEOHOOK_ERR_CONFIG', 'REDIS_URL: required by buildReceiver (or pass a connection)');
  }
  const connection = options.connection ?? createProducerConnection(config.redisUrl!);
  const eventQueue = new EventQueue({
    connection,
    prefix: config.prefix,
    dedupRetentionSeconds: config.dedupRetentionSeconds,
    enqueueTimeoutMs: config.enqueueTimeoutMs,
    completedJobs: config.completedJobs,
  });
  const metrics = createReceiverMetrics(eventQueue);

  const loggerOptions = createLoggerOptions({ level: config.logLevel, signatureHeaders: config.signatureHeaders });
  const app = Fastify({
    ...(options.loggerInstance === undefined ? { logger: loggerOptions } : { loggerInstance: options.loggerInstance }),
    bodyLimit: config.maxBodyBytes,
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
  });
  app.decorate('eventQueue', eventQueue);
  watchConnection(connection, app.log);
  if (config.requireSignature) {
    for (const hook of config.hooks.values()) {
      if (hook.secrets.length === 0) {
        app.log.warn({ hook: hook.name }, 'hook has no signature key: its deliveries are refused (set HOOK_SECRETS, or REQUIRE_SIGNATURE=false)');
      }
    }
  }

  // Requests still in flight when closing begins end their connection with the response, so that close
  // does not wait for the clients' keep-alive timeouts.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new GeohookError('GEOHOOK_ERR_NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
  app.setErrorHandler((err, request, reply) => {
    const error = toGeohookError(err as Parameters<typeof toGeohookError>[0]);
    if (error.statusCode >= 500) request.log.error({ err }, 'request failed');
    return sendError(reply, error);
  });

  await app.register(webhookRoutes, {
    hooks: config.hooks,
    policy: { requireSignature: config.requireSignature, signatureHeaders: config.signatureHeaders },
    maxBodyBytes: config.maxBodyBytes,
    eventQueue,
    metrics,
  });
  await app.register(healthRoutes, {
    connection,
    registry: metrics.registry,
    ...(options.readinessChecks === undefined ? {} : { readinessChecks: options.readinessChecks }),
  });

  app.addHook('onClose', async () => {
    await eventQueue.close();
    if (options.connection === undefined) await connection.quit().catch(() => connection.disconnect());
  });
  return app;
}
