import type { FastifyBaseLogger } from 'fastify';
import type { QueueUnavailableError } from '../errors.js';
import { createWarningLimiter } from '../warning-limiter.js';

/** How often, at most, the receiver says that it refuses requests for want of Redis. */
const REFUSAL_WARNING_INTERVAL_MS = 60_000;

/** Where the receiver says the requests it refuses because Redis cannot take them, and counts them. */
export interface RefusalLog {
  /** Says a refusal (a warning once a minute at most) and counts it. */
  (error: QueueUnavailableError): void;
  /** How many were refused since the last call (or since it was made). */
  takeCount(): number;
}

/**
 * What the receiver logs of a request it refuses with 503 and `Retry-After` because Redis cannot take it (an
 * outage, a start-up before Redis answers, strict durability not kept): expected while it lasts, and retried by
 * the sender, so a warning without a stack, `code` and `reason`, once a minute at most; the next line says how
 * many it left out (`suppressed`), and the line that says Redis is back how many were refused in all. Each refusal
 * still has its request log line and counts in the metrics.
 */
export function createRefusalLog(log: FastifyBaseLogger): RefusalLog {
  const warnings = createWarningLimiter(log, REFUSAL_WARNING_INTERVAL_MS);
  let count = 0;
  const refused = (error: QueueUnavailableError): void => {
    count += 1;
    warnings.warn(
      { code: error.code, reason: error.message },
      'requests refused with 503 until Redis takes them again; senders retry after Retry-After (said once a minute at most)',
    );
  };
  return Object.assign(refused, {
    takeCount() {
      const taken = count;
      count = 0;
      return taken;
    },
  });
}
