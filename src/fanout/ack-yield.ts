import { logIdMs } from './log-id.js';

/** Options of {@link createAckYield}. */
export interface AckYieldOptions {
  /** Whether the acknowledgements run at their capacity now (the receiver's own measure). */
  saturated: () => boolean;
  /** Longest an event stays in the log while the fan-out yields, ms: past it the fan-out hands over regardless (0: it never yields). */
  maxLagMs: number;
  /** The id of the log's first entry after `cursor`, `undefined` when there is none. */
  nextAfter: (cursor: string) => Promise<string | undefined>;
  /**
   * How long a yield lasts at least, ms: long enough for `saturated` to measure the acknowledgements alone, without
   * the fan-out's calls, which they also wait behind. @defaultValue 500
   */
  probeMs?: number;
  /**
   * How long the acknowledgements must have looked saturated, the fan-out behind all the while, before a yield begins,
   * ms: a single busy window of the measures (a garbage collection, a stall of Redis, a turn of the fan-out's own
   * catching up) is not a burst. @defaultValue 500
   */
  holdMs?: number;
  /**
   * After a yield that found the acknowledgements below capacity by themselves, how long `saturated` is not heeded,
   * ms: the fan-out's own calls were what held them up, and the fan-out runs on. @defaultValue 2000
   */
  coolMs?: number;
  /** The clock, ms since the epoch (the log's ids are compared with it). @defaultValue Date.now */
  now?: () => number;
}

/** Acks first: whether the fan-out should leave the log alone for now. */
export interface AckYield {
  /**
   * True while the acknowledgements are saturated and the oldest entry after `cursor` is younger than the bound. A
   * yield begins only while the fan-out is `behind` (its last read found a whole batch, and the log grows faster than
   * it hands it over: `lag-trend.ts`): one that keeps up with the log costs the acknowledgements little, whatever
   * holds them up.
   */
  shouldYield(cursor: string, behind: boolean): Promise<boolean>;
}

/**
 * Acks first (docs/subscriptions.md#during-a-burst): the fan-out's work is almost all Redis's, which the
 * acknowledgements need too. While they are saturated the fan-out hands nothing over, and once they are not it
 * catches up; past `maxLagMs` behind it hands over regardless, so that a sustained overload leaves the destinations
 * that far behind at most. A yield begins once they have looked saturated for `holdMs`, not at a single busy moment.
 * Acknowledgements waiting behind the fan-out's own calls look saturated too: a yield lasts
 * `probeMs` at least, which measures them alone, and when they were not saturated by themselves the fan-out runs on
 * for `coolMs` whatever the measure says. The oldest entry it has not handed over is read once per cursor.
 */
export function createAckYield(options: AckYieldOptions): AckYield {
  const { saturated, maxLagMs, nextAfter, probeMs = 500, holdMs = 500, coolMs = 2000, now = Date.now } = options;
  let oldest: { cursor: string; id: string } | undefined;
  /** Since when the acknowledgements have looked saturated with the fan-out behind; `undefined` while they do not. */
  let saturatedSince: number | undefined;
  /** When the current yield began; `undefined` while the fan-out runs. */
  let yieldingSince: number | undefined;
  let heedFrom = 0;

  /** Whether the acknowledgements want Redis to themselves now. */
  const ackFirst = (at: number, behind: boolean): boolean => {
    if (yieldingSince === undefined) {
      if (!behind || at < heedFrom || !saturated()) {
        saturatedSince = undefined;
        return false;
      }
      saturatedSince ??= at;
      if (at - saturatedSince < holdMs) return false;
      saturatedSince = undefined;
      yieldingSince = at;
      return true;
    }
    if (at - yieldingSince < probeMs || saturated()) return true;
    yieldingSince = undefined;
    heedFrom = at + coolMs;
    return false;
  };

  return {
    async shouldYield(cursor, behind) {
      const at = now();
      if (maxLagMs <= 0 || !ackFirst(at, behind)) {
        oldest = undefined;
        return false;
      }
      if (oldest?.cursor !== cursor) {
        const id = await nextAfter(cursor);
        // Nothing to hand over: nothing to yield either, but the fan-out would only wait for the next entry.
        if (id === undefined) return true;
        oldest = { cursor, id };
      }
      return at - logIdMs(oldest.id) < maxLagMs;
    },
  };
}
