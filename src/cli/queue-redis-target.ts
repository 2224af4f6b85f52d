import { resolve } from 'node:path';
import type { GeohookConfig } from '../config/load-config.js';
import { EMBEDDED_REDIS_DIR, readRecordedRedisUrl } from '../embedded/recorded-redis-url.js';
import { ConfigError } from '../errors.js';
import { configuredTarget, hasConfiguredRedis, type RedisTarget } from '../redis/connection.js';

/**
 * The Redis a command that reads the queues connects to: the configured one (REDIS_URL, Sentinel or a
 * Cluster), else the embedded redis-server of a `geohook up` running in the working directory.
 */
export function queueRedisTarget(config: GeohookConfig, embeddedDir = EMBEDDED_REDIS_DIR): RedisTarget {
  if (hasConfiguredRedis(config)) return configuredTarget(config);
  const url = readRecordedRedisUrl(resolve(embeddedDir));
  if (url === undefined) {
    throw new ConfigError(
      `REDIS_URL: not set, and no \`geohook up\` is running in this directory (it records its Redis in ${EMBEDDED_REDIS_DIR}/url)`,
    );
  }
  return configuredTarget(config, url);
}
