import type { RedisClient } from '../redis/connection.js';
import { eventLogKey, fanoutKey } from '../redis/keys.js';
import { firstEntryAfter } from './event-log.js';
import { LOG_START, logIdMs } from './log-id.js';

/**
 * How long the oldest event the fan-out has not handed over yet has been in the event log, ms (0 with none): a
 * moment in steady use, up to `eventLog.maxLagSeconds` while it yields to saturated acknowledgements.
 */
export async function readFanoutLagMs(redis: RedisClient, prefix: string, nowMs = Date.now()): Promise<number> {
  const cursor = (await redis.hget(fanoutKey(prefix), 'cursor')) ?? LOG_START;
  const next = await firstEntryAfter(redis, eventLogKey(prefix), cursor);
  return next === undefined ? 0 : Math.max(0, nowMs - logIdMs(next));
}
