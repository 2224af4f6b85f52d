import type { BaseLogger } from 'pino';

/** Warnings that a flood of one cause must not repeat line after line. */
export interface WarningLimiter {
  /**
   * Logs `message` (the cause) with `fields`, unless it was logged less than the interval ago: then only counts it.
   * The next line of that cause says how many it left out (`suppressed`).
   */
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * A {@link WarningLimiter}: at most one line per cause every `intervalMs`.
 *
 * @param log where the lines go, at `warn`: any pino logger, a Fastify one included.
 * @param intervalMs the least time between two lines of one cause.
 * @param now the clock, epoch ms (`Date.now` unless a test sets one).
 */
export function createWarningLimiter(log: Pick<BaseLogger, 'warn'>, intervalMs: number, now: () => number = Date.now): WarningLimiter {
  const causes = new Map<string, { until: number; suppressed: number }>();
  return {
    warn(fields, message) {
      const at = now();
      const cause = causes.get(message);
      if (cause !== undefined && at < cause.until) {
        cause.suppressed += 1;
        return;
      }
      log.warn(cause === undefined || cause.suppressed === 0 ? fields : { ...fields, suppressed: cause.suppressed }, message);
      causes.set(message, { until: at + intervalMs, suppressed: 0 });
    },
  };
}
