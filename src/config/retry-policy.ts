/** Attempts and backoff of each event's job. */
export interface RetryPolicy {
  /** Attempts in all, the first one included. @defaultValue 5 */
  readonly attempts: number;
  readonly backoff: {
    /** @defaultValue 'exponential' */
    readonly type: 'exponential' | 'fixed';
    /** @defaultValue 1000 */
    readonly delayMs: number;
    /** Fraction of each delay drawn at random. @defaultValue 0.2 */
    readonly jitter: number;
  };
}
