import type { Clock } from './clock.js';

/**
 * The clock the delivery engine reads: the emulator clock, except while {@link PinnableClock.at} runs. The
 * engine writes the time it reads when an event fires into the payload (`events[0].when`, and the
 * `serverGens` of `changesUrl`); pinning it to an edit's recorded time makes the URL select that edit.
 */
export class PinnableClock implements Clock {
  readonly #base: Clock;
  #pinned: number | undefined;

  constructor(base: Clock) {
    this.#base = base;
  }

  now(): number {
    return this.#pinned ?? this.#base.now();
  }

  /** Runs `fire` (synchronous) with `now()` held at `epochMs`. */
  at<T>(epochMs: number, fire: () => T): T {
    this.#pinned = epochMs;
    try {
      return fire();
    } finally {
      this.#pinned = undefined;
    }
  }
}
