/** Reads of one resource shared: however many callers name a key, it is read at most once per spacing. */
export interface SharedReads<T> {
  /**
   * The answer for `key` of a read that started at or after `notBefore` (epoch ms) and ended less than the keeping
   * time ago, or is under way; else a new read's, started no sooner than the spacing after the one before.
   */
  get(key: string, read: () => Promise<T>, notBefore?: number): Promise<T>;
}

/** Options of {@link createSharedReads}. */
export interface SharedReadsOptions {
  /** How long an answer is kept from the end of its read, ms. */
  keepMs: number;
  /** The least time between the starts of two reads of one key, ms. @defaultValue 0 */
  spacingMs?: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

interface Read<T> {
  /** When the read started (or is due to start), epoch ms. */
  startedAt: number;
  /** Until when its answer is kept, epoch ms: infinity while it is under way. */
  until: number;
  answer: Promise<T>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** {@link SharedReads} whose answers are kept `keepMs` from the end of each read; a failed read is not kept. */
export function createSharedReads<T>(options: SharedReadsOptions): SharedReads<T> {
  const { keepMs, spacingMs = 0, now = Date.now } = options;
  const reads = new Map<string, Read<T>>();
  /** The start of the last read of each key, kept while it bounds the next one. */
  const lastStart = new Map<string, number>();
  return {
    get(key, read, notBefore = Number.NEGATIVE_INFINITY) {
      const at = now();
      for (const [known, { until }] of reads) if (until <= at) reads.delete(known);
      for (const [known, startedAt] of lastStart) if (startedAt + spacingMs <= at && !reads.has(known)) lastStart.delete(known);
      const kept = reads.get(key);
      if (kept !== undefined && kept.startedAt >= notBefore) return kept.answer;
      const startsAt = Math.max(at, (lastStart.get(key) ?? Number.NEGATIVE_INFINITY) + spacingMs);
      const answer = (startsAt > at ? sleep(startsAt - at) : Promise.resolve()).then(read);
      const entry: Read<T> = { startedAt: startsAt, until: Number.POSITIVE_INFINITY, answer };
      reads.set(key, entry);
      lastStart.set(key, startsAt);
      answer.then(
        () => {
          if (reads.get(key) === entry) entry.until = now() + keepMs;
        },
        () => {
          if (reads.get(key) === entry) reads.delete(key);
        },
      );
      return answer;
    },
  };
}
