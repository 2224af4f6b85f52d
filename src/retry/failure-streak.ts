import type { Logger } from 'pino';

/** How long to wait between tries of something that keeps failing. */
export interface BackoffOptions {
  /** The wait after the first failure; doubled after each further one, up to `maxMs`. @defaultValue 1000 */
  initialMs?: number | undefined;
  /** @defaultValue 60000 */
  maxMs?: number | undefined;
}

/** The wait after the `failures`th failure in a row (from 0): `initialMs` doubling up to `maxMs`. */
export function backoffMs(failures: number, { initialMs = 1000, maxMs = 60_000 }: BackoffOptions = {}): number {
  return Math.min(initialMs * 2 ** failures, maxMs);
}

/** Options of {@link FailureStreak}. */
export interface FailureStreakOptions extends BackoffOptions {
  logger: Logger;
  /** What fails, starting each line: `registration`, `PostgreSQL`. */
  subject: string;
  /** The first line of a cause, with the cause in its `failed` field. */
  failingMessage: string;
  /** The line when a try succeeds after failures; none when undefined. */
  recoveredMessage?: string;
  /** At most one "still failing, same cause" line in this time. @defaultValue `maxMs` */
  repeatMs?: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

/**
 * The failures in a row of something tried again and again (a registration pass, the mirror's database), said
 * once per cause: the first failure of a cause in one warning naming it, then, while the cause stays the same, at
 * most one brief "still failing, same cause (N tries since T)" line every `repeatMs`; a recovery in one line. Each
 * failure tells how long to wait before the next try (see {@link backoffMs}).
 */
export class FailureStreak {
  private readonly options: FailureStreakOptions;
  private failureCount = 0;
  private lastCause: string | undefined;
  private causeSince = 0;
  private causeTries = 0;
  private loggedAt = 0;

  constructor(options: FailureStreakOptions) {
    this.options = options;
  }

  /** Why the last try failed; undefined when it succeeded (or none was made). */
  get cause(): string | undefined {
    return this.lastCause;
  }

  /** Failures in a row so far. */
  get failures(): number {
    return this.failureCount;
  }

  /**
   * A try failed because of `cause` (one line, naming what to fix): logged when it is new, with `fields` (an
   * unexpected error's `err`), else in brief at most every `repeatMs`. Resolves to the wait before the next try.
   */
  failed(cause: string, fields: Record<string, unknown> = {}): number {
    const { logger, subject, now = Date.now } = this.options;
    const at = now();
    const retryInMs = backoffMs(this.failureCount, this.options);
    this.failureCount += 1;
    if (cause !== this.lastCause) {
      this.lastCause = cause;
      this.causeSince = at;
      this.causeTries = 1;
      this.loggedAt = at;
      logger.warn({ ...fields, retryInMs, failed: cause }, this.options.failingMessage);
      return retryInMs;
    }
    this.causeTries += 1;
    if (at - this.loggedAt >= (this.options.repeatMs ?? this.options.maxMs ?? 60_000)) {
      this.loggedAt = at;
      const since = new Date(this.causeSince).toISOString();
      logger.warn(
        { retryInMs, tries: this.causeTries, since },
        `${subject} still failing, same cause (${this.causeTries} tries since ${since}): retrying`,
      );
    }
    return retryInMs;
  }

  /** A try succeeded: the streak ends, said in one line when it followed failures and a recovery message is set. */
  succeeded(): void {
    if (this.failureCount > 0 && this.options.recoveredMessage !== undefined) {
      this.options.logger.info({ tries: this.failureCount }, this.options.recoveredMessage);
    }
    this.failureCount = 0;
    this.lastCause = undefined;
  }
}
