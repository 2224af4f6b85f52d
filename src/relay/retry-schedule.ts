import { ConfigError, RelayDeliveryError } from '../errors.js';

/**
 * The waits between tries of a relay, ms: the first try goes at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
 * and 10 h (8 tries over about 27.5 h, the schedule Svix uses and Standard Webhooks' example starts with; the
 * example goes on with 14 h, 20 h and 24 h, which a route's own schedule can add).
 */
export const STANDARD_WEBHOOKS_SCHEDULE_MS: readonly number[] = Object.freeze([
  5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
]);

/** @defaultValue of {@link RelayBackoffOptions.jitter}: each wait is drawn within ±20 % of the schedule's. */
export const DEFAULT_RELAY_JITTER = 0.2;

/** Options of {@link createRelayBackoff}. */
export interface RelayBackoffOptions {
  /** The wait after each failed try, in order; the last one repeats if the job has more attempts. @defaultValue STANDARD_WEBHOOKS_SCHEDULE_MS */
  scheduleMs?: readonly number[];
  /** Fraction drawn at random on either side of each wait, 0 to 1. @defaultValue 0.2 */
  jitter?: number;
  /** Uniform in [0, 1) (tests inject one). @defaultValue Math.random */
  random?: () => number;
}

/** The BullMQ `attempts` of a relay job on `scheduleMs`: the first try and one after each wait. */
export const relayAttempts = (scheduleMs: readonly number[] = STANDARD_WEBHOOKS_SCHEDULE_MS): number => scheduleMs.length + 1;

/** The schedule of a route's `retry` in the shape of the top-level `retry`: `attempts - 1` waits, doubling from `delayMs` or fixed. */
export function scheduleFromPolicy(policy: { attempts: number; backoff: { type: 'exponential' | 'fixed'; delayMs: number } }): number[] {
  const { attempts, backoff } = policy;
  return Array.from({ length: Math.max(0, attempts - 1) }, (_, index) =>
    backoff.type === 'fixed' ? backoff.delayMs : backoff.delayMs * 2 ** index,
  );
}

/**
 * A BullMQ `backoffStrategy` (set in the worker's `settings`, with job option `backoff: {type: 'custom'}`):
 * after the n-th failed try, the n-th wait of the schedule with ±`jitter` drawn at random. Jitter around the
 * wait, not "full jitter" (0 to the wait), keeps the schedule's shape: the 5-s retry stays about 5 s, and
 * routes that failed together spread out without any one retrying at once. When the failure is a
 * {@link RelayDeliveryError} whose route asked for a longer wait (`Retry-After` on a 429 or 503), that wait is
 * kept instead. Throws a `GEOHOOK_ERR_CONFIG` error for an empty schedule, a negative wait or a jitter outside 0 to 1.
 */
export function createRelayBackoff(options: RelayBackoffOptions = {}): (attemptsMade: number, type?: string, err?: Error) => number {
  const { scheduleMs = STANDARD_WEBHOOKS_SCHEDULE_MS, jitter = DEFAULT_RELAY_JITTER, random = Math.random } = options;
  if (scheduleMs.length === 0) throw new ConfigError('a relay retry schedule needs at least one wait');
  if (!scheduleMs.every((waitMs) => Number.isFinite(waitMs) && waitMs >= 0))
    throw new ConfigError('a relay retry schedule holds waits in ms, each 0 or more');
  if (!(jitter >= 0 && jitter <= 1)) throw new ConfigError('a relay retry jitter is a fraction from 0 to 1');
  const schedule = [...scheduleMs];
  return (attemptsMade, _type, err) => {
    const waitMs = schedule[Math.min(Math.max(attemptsMade, 1), schedule.length) - 1]!;
    const jittered = Math.round(waitMs * (1 + jitter * (2 * random() - 1)));
    const asked = err instanceof RelayDeliveryError ? (err.retryAfterMs ?? 0) : 0;
    return Math.max(jittered, asked);
  };
}
