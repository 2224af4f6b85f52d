/** Options of {@link startPollLoop}. */
export interface PollLoopOptions {
  /** One check: what the loop runs, once at start and then every `intervalMs`. */
  check: () => Promise<void>;
  /** How often a check starts (while none is running). */
  intervalMs: number;
  /** A check that failed: says so, and may answer how long to wait before the next one, ms (a backoff). */
  failed: (err: unknown) => number | void;
  /** A check that succeeded. */
  succeeded?: () => void;
}

/** A running poll loop. */
export interface PollLoop {
  /**
   * Something the check looks for may be there now: a check starts at once, or right after the one under way ends,
   * without waiting for the interval (not while a failure's backoff lasts).
   */
  wake(): void;
  /** Stops the loop, after the check under way (if any) ends. */
  close(): Promise<void>;
}

/**
 * Runs `check` at once and then every `intervalMs`, one at a time: while one runs (Redis away, a long copy, a
 * database that does not answer) the next waits for it, and none pile up behind. The timer holds no process open.
 */
export function startPollLoop(options: PollLoopOptions): PollLoop {
  let closed = false;
  let running: Promise<void> | undefined;
  /** No check starts before this time (epoch ms): the backoff after a failure. */
  let nextAt = 0;
  /** A wake came while a check ran: another starts when it ends. */
  let woken = false;
  const start = (): void => {
    if (closed || running !== undefined || Date.now() < nextAt) return;
    woken = false;
    running = options
      .check()
      .then(
        () => options.succeeded?.(),
        (err: unknown) => {
          const waitMs = options.failed(err);
          if (typeof waitMs === 'number') nextAt = Date.now() + waitMs;
        },
      )
      .finally(() => {
        running = undefined;
        if (woken) start();
      });
  };
  const timer = setInterval(start, options.intervalMs);
  timer.unref();
  start();
  return {
    wake() {
      if (running !== undefined) woken = true;
      start();
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
