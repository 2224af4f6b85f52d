import type { Redis } from 'ioredis';
import { ioredis } from '../commonjs/ioredis.js';
import { GeohookError } from '../errors.js';
import type { RedisClient } from './connection.js';

/** Redis' answers to a connection without a password (NOAUTH) or with a wrong one (WRONGPASS; before Redis 6, ERR invalid password). */
const REFUSAL = /^(NOAUTH|WRONGPASS)\b|^ERR invalid password/;

/** True when `err` is Redis refusing the connection's credentials: retrying with the same ones cannot succeed. */
export function isAuthRefusal(err: unknown): boolean {
  return err instanceof Error && REFUSAL.test(err.message);
}

/** Where `redis` connects, as a message may name it: `redis://host:port` without credentials, the sentinels, or the cluster. */
export function describeConnection(redis: RedisClient): string {
  if (redis instanceof ioredis.Cluster) return 'the Redis Cluster';
  const { host, port, tls, sentinels, name } = (redis as Redis).options;
  if (sentinels !== undefined && sentinels !== null)
    return `master ${name ?? '?'} of sentinels ${sentinels.map((sentinel) => `${sentinel.host ?? '?'}:${sentinel.port ?? 26379}`).join(',')}`;
  return `${tls === undefined ? 'redis' : 'rediss'}://${host ?? '127.0.0.1'}:${port ?? 6379}`;
}

/**
 * The one error a refused password is (`GEOHOOK_ERR_REDIS_AUTH`): which Redis (never the password), what it said, and
 * where the right URL is. `source` names what carried the credentials (REDIS_URL, or the connection of subscribe()).
 */
export function redisAuthError(redis: RedisClient, refusal: Error, source = 'REDIS_URL'): GeohookError {
  const reason = refusal.message.startsWith('NOAUTH') ? 'no password was given (NOAUTH)' : 'the password is wrong (WRONGPASS)';
  return new GeohookError(
    'GEOHOOK_ERR_REDIS_AUTH',
    `Redis at ${describeConnection(redis)} refused the connection: ${reason}. Give its password in ${source} (redis://:PASSWORD@host:port); with geohook up running here, use the URL in .geohook/redis/url`,
    { cause: refusal },
  );
}
