import { Redis, type RedisOptions } from 'ioredis';

/**
 * A producer connection fails fast: commands issued while Redis is unreachable reject at once instead of
 * waiting in ioredis' offline queue, so a delivery can be answered 503 within the enqueue timeout.
 */
export function createProducerConnection(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    ...options,
  });
}
