import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { GeohookError } from '../errors.js';
import { unavailableReason } from '../redis/connection-state.js';
import type { RedisClient } from '../redis/connection.js';
import { bearerToken, safeEqual } from './bearer-token.js';
import { sendError } from './error-reply.js';

/** Options of the health and metrics routes. */
export interface HealthRouteOptions {
  connection: RedisClient;
  registry: Registry;
  /** Longest wait for Redis to answer PING. @defaultValue 1000 */
  pingTimeoutMs?: number;
  /** Further readiness conditions (start-up registration, …): a reason when not ready, else undefined. */
  readinessChecks?: ReadonlyArray<() => string | undefined>;
  /** What `/readyz` adds to its answer, ready or not. */
  readinessDetails?: () => Record<string, unknown> | undefined;
  /** The bearer token `/metrics` requires (METRICS_TOKEN). @defaultValue undefined: `/metrics` is open */
  metricsToken?: string;
}

async function pingRedis(connection: RedisClient, timeoutMs: number): Promise<string | undefined> {
  if (connection.status !== 'ready') return unavailableReason(connection);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      connection.ping(),
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return undefined;
  } catch (err) {
    return `Redis PING failed: ${(err as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

/** `GET /healthz`, `GET /readyz` and `GET /metrics` (Prometheus text format, behind `metricsToken` when one is set). */
export async function healthRoutes(app: FastifyInstance, options: HealthRouteOptions): Promise<void> {
  const pingTimeoutMs = options.pingTimeoutMs ?? 1000;

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const reason =
      (await pingRedis(options.connection, pingTimeoutMs)) ??
      options.readinessChecks?.map((check) => check()).find((result) => result !== undefined);
    const details = options.readinessDetails?.() ?? {};
    if (reason !== undefined) return reply.code(503).send({ status: 'not ready', reason, ...details });
    return { status: 'ready', ...details };
  });

  const { metricsToken } = options;
  app.get('/metrics', async (request, reply) => {
    if (metricsToken !== undefined) {
      const token = bearerToken(request.headers.authorization);
      if (token === undefined || !safeEqual(token, metricsToken)) {
        reply.header('www-authenticate', 'Bearer realm="geohook-metrics"');
        return sendError(reply, new GeohookError('GEOHOOK_ERR_METRICS_AUTH', 'the metrics need Authorization: Bearer <METRICS_TOKEN>'));
      }
    }
    const body = await options.registry.metrics();
    return reply.type(options.registry.contentType).send(body);
  });
}
