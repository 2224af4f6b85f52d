/** Milliseconds in one UTC calendar day. */
export const DAY_MS = 86_400_000;

/** A source of "now" in epoch milliseconds; the emulator's is movable, tests may pass a fixed one. */
export interface Clock {
  now(): number;
}

/** Days since the epoch of the UTC calendar day holding `epochMs` (day 0 is 1970-01-01). */
export function utcDay(epochMs: number): number {
  return Math.floor(epochMs / DAY_MS);
}

/** Options of {@link EmulatorClock}. */
export interface EmulatorClockOptions {
  /**
   * The real time the offset is added to.
   * @defaultValue `Date.now`
   */
  realNow?: () => number;
}

function finite(name: string, value: number): number {
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number, got ${String(value)}`);
  return value;
}

/**
 * The emulator's clock: real time plus an offset, so time keeps flowing after `set` or `advanceDays`
 * (delivery timestamps stay ordered) while tests and `POST /emulator/clock` can jump days ahead.
 */
export class EmulatorClock implements Clock {
  readonly #realNow: () => number;
  #offsetMs = 0;

  constructor(options: EmulatorClockOptions = {}) {
    this.#realNow = options.realNow ?? Date.now;
  }

  /** Emulated now, epoch milliseconds. */
  now(): number {
    return this.#realNow() + this.#offsetMs;
  }

  /** How far the emulated time is ahead of real time (negative: behind). */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Makes `now()` return `epochMs` at this instant; time flows on from there. */
  set(epochMs: number): void {
    this.#offsetMs = finite('epochMs', epochMs) - this.#realNow();
  }

  /** Moves the clock `n` whole or fractional days (negative: back). */
  advanceDays(n: number): void {
    this.#offsetMs += finite('n', n) * DAY_MS;
  }
}
