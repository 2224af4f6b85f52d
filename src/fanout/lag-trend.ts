/** Options of {@link LagTrend}. */
export interface LagTrendOptions {
  /** Shortest time between the two reads whose lags are compared, ms. @defaultValue 250 */
  windowMs?: number;
  /** Share of the time between them by which the lag must have risen. @defaultValue 0.25 */
  riseShare?: number;
}

/**
 * Whether the event log grows faster than the fan-out hands it over: the lag of its reads (how long the oldest entry
 * a read found had waited) rose by more than a quarter of the time between two reads a quarter second apart at least.
 * A fan-out that keeps up holds its lag, whatever its batches; one that the log outpaces sees it rise with the time.
 */
export class LagTrend {
  readonly #windowMs: number;
  readonly #riseShare: number;
  #from: { atMs: number; lagMs: number } | undefined;
  #growing = false;

  constructor(options: LagTrendOptions = {}) {
    this.#windowMs = options.windowMs ?? 250;
    this.#riseShare = options.riseShare ?? 0.25;
  }

  /** A read at `atMs` whose oldest entry was stored at `oldestMs`; returns whether the log grows, as of the last window. */
  note(atMs: number, oldestMs: number): boolean {
    const lagMs = atMs - oldestMs;
    if (this.#from === undefined) this.#from = { atMs, lagMs };
    else if (atMs - this.#from.atMs >= this.#windowMs) {
      this.#growing = lagMs - this.#from.lagMs > (atMs - this.#from.atMs) * this.#riseShare;
      this.#from = { atMs, lagMs };
    }
    return this.#growing;
  }
}
