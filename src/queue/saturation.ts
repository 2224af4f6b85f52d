/** Options of {@link Saturation}. */
export interface SaturationOptions {
  /** The window over which the share of full time is measured, ms. @defaultValue 250 */
  windowMs?: number;
  /**
   * Share of a window the writer must have spent full for the acknowledgements to count as saturated. Under a load at
   * capacity it is full 56 to 68 % of each quarter second; at two thirds of capacity a few per cent, at most a third
   * (docs/performance.md#subscriptions). @defaultValue 0.5
   */
  threshold?: number;
  /** The clock, ms (tests). @defaultValue performance.now */
  now?: () => number;
}

/**
 * Whether the acknowledgements run at their capacity: the share of the last window during which the job writer was
 * full, with more script calls in flight than its pipeline's depth (a batch of its largest size sent while the others
 * ran: deliveries came faster than its batches grow). A slow round trip alone (a busy machine, a distant Redis) fills
 * the pipeline with small batches, not this; at capacity it holds all the time.
 */
export class Saturation {
  readonly #windowMs: number;
  readonly #threshold: number;
  readonly #now: () => number;
  #windowStart: number;
  #fullSince: number | undefined;
  #fullMs = 0;
  #saturated = false;

  constructor(options: SaturationOptions = {}) {
    this.#windowMs = options.windowMs ?? 250;
    this.#threshold = options.threshold ?? 0.5;
    this.#now = options.now ?? (() => performance.now());
    this.#windowStart = this.#now();
  }

  /** The writer became full (`true`) or has room again (`false`). */
  mark(full: boolean): void {
    const now = this.#roll();
    if (full) this.#fullSince ??= now;
    else if (this.#fullSince !== undefined) {
      this.#fullMs += now - Math.max(this.#fullSince, this.#windowStart);
      this.#fullSince = undefined;
    }
  }

  /** Whether the last whole window was spent full for at least the threshold's share. */
  get saturated(): boolean {
    this.#roll();
    return this.#saturated;
  }

  /** Closes the window when it has run its length; returns the time. */
  #roll(): number {
    const now = this.#now();
    const elapsed = now - this.#windowStart;
    if (elapsed < this.#windowMs) return now;
    const open = this.#fullSince === undefined ? 0 : now - Math.max(this.#fullSince, this.#windowStart);
    this.#saturated = (this.#fullMs + open) / elapsed >= this.#threshold;
    this.#windowStart = now;
    this.#fullMs = 0;
    return now;
  }
}
