import type { RedisClient } from './connection.js';
import { registrationFailingKey } from './keys.js';

/** A service self-registration could not register, as `/readyz`, doctor and the services page show it. */
export interface FailingService {
  service: string;
  /** Why its last attempt failed. */
  reason: string;
  /** When it first failed in this run of failures, epoch ms. */
  since: number;
  /** Attempts failed in a row. */
  failures: number;
  /** When it is tried again on its own, epoch ms. */
  retryAt: number;
}

/** The services a receiver recorded as failing to register `hook` (any replica), by name. */
export async function readFailingServices(redis: RedisClient, prefix: string, hook: string): Promise<FailingService[]> {
  const stored = await redis.hgetall(registrationFailingKey(prefix, hook));
  return Object.values(stored)
    .map((text) => JSON.parse(text) as FailingService)
    .sort((a, b) => a.service.localeCompare(b.service));
}
