import type { GeohookConfig } from '../config/load-config.js';
import { EMBEDDED_REDIS_DIR, runningUpRedisUrl } from '../embedded/recorded-redis-url.js';
import { GeohookError } from '../errors.js';
import { isAuthRefusal, redisAuthError } from '../redis/auth-refusal.js';
import {
  configuredTarget,
  createProducerConnection,
  describeTarget,
  hasConfiguredRedis,
  type RedisClient,
  type RedisTarget,
} from '../redis/connection.js';

/**
 * The Redis a command that reads the queues connects to: the configured one (REDIS_URL, Sentinel or a
 * Cluster), else the embedded redis-server of a `geohook up` running in the working directory.
 */
export function queueRedisTarget(config: GeohookConfig, embeddedDir = EMBEDDED_REDIS_DIR): RedisTarget {
  return hasConfiguredRedis(config) ? configuredTarget(config) : configuredTarget(config, runningUpRedisUrl(embeddedDir));
}

/** Longest wait for Redis to answer before a command gives up. */
const CONNECT_TIMEOUT_MS = 3000;

/**
 * A fail-fast connection to {@link queueRedisTarget}, connected: Redis that does not answer is one
 * `GEOHOOK_ERR_QUEUE_UNAVAILABLE` within {@link CONNECT_TIMEOUT_MS}, never a hang; a refused password is one
 * `GEOHOOK_ERR_REDIS_AUTH`. `where` names it in messages.
 */
export async function connectQueueRedis(config: GeohookConfig): Promise<{ connection: RedisClient; where: string }> {
  const target = queueRedisTarget(config);
  const where = describeTarget(target);
  const connection = createProducerConnection(target, { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, retryStrategy: () => null });
  let failure: Error | undefined;
  connection.on('error', (err: Error) => (failure ??= err)); // the first failure is the one reported
  try {
    await connection.connect();
  } catch (err) {
    // Once ended, disconnect() would hold the process for ioredis' disconnectTimeout.
    if (connection.status !== 'end') connection.disconnect();
    const cause = failure ?? (err as Error);
    if (isAuthRefusal(cause)) throw redisAuthError(connection, cause);
    throw new GeohookError('GEOHOOK_ERR_QUEUE_UNAVAILABLE', `cannot reach Redis at ${where}: ${cause.message}`, { cause });
  }
  return { connection, where };
}
