import { logIdMs } from './log-id.js';

/** Options of {@link createAckYield}. */
export interface AckYieldOptions {
  /** Whether the acknowledgements run at their capacity now (the receiver's own measure). */
  saturated: () => boolean;
  /** Longest an event stays in the log while the fan-out yields, ms: past it the fan-out hands over regardless (0: it never yields). */
  maxLagMs: number;
  /** The id of the log's first entry after `cursor`, `undefined` when there is none. */
  nextAfter: (cursor: string) => Promise<string | undefined>;
  /** The clock the log's ids are compared with, ms. @defaultValue Date.now */
  now?: () => number;
}

/** Acks first: whether the fan-out should leave the log alone for now. */
export interface AckYield {
  /** True while the acknowledgements are saturated and the oldest entry after `cursor` is younger than the bound. */
  shouldYield(cursor: string): Promise<boolean>;
}

/**
 * Acks first (docs/subscriptions.md#during-a-burst): the fan-out's work is almost all Redis's, which the
 * acknowledgements need too. While they are saturated the fan-out hands nothing over, and once they are not it
 * catches up; past `maxLagMs` behind it hands over regardless, so that a sustained overload leaves the destinations
 * that far behind at most. The oldest entry it has not handed over is read once per position of the cursor.
 */
export function createAckYield(options: AckYieldOptions): AckYield {
  const { saturated, maxLagMs, nextAfter, now = Date.now } = options;
  let oldest: { cursor: string; id: string } | undefined;
  return {
    async shouldYield(cursor) {
      if (maxLagMs <= 0 || !saturated()) {
        oldest = undefined;
        return false;
      }
      if (oldest?.cursor !== cursor) {
        const id = await nextAfter(cursor);
        // Nothing to hand over: nothing to yield either, but the fan-out would only wait for the next entry.
        if (id === undefined) return true;
        oldest = { cursor, id };
      }
      return now() - logIdMs(oldest.id) < maxLagMs;
    },
  };
}
