/** Reads of one resource shared for a while: however many scopes name a service, it is read at most once per interval. */
export interface SharedReads<T> {
  /** The answer for `key` read less than the interval ago (or being read), else `read()`'s, kept for the interval. */
  get(key: string, read: () => Promise<T>): Promise<T>;
}

/** {@link SharedReads} kept `forMs` from the end of each read; a failed read is not kept. */
export function createSharedReads<T>(forMs: number, now: () => number = Date.now): SharedReads<T> {
  const answers = new Map<string, { until: number; answer: Promise<T> }>();
  return {
    get(key, read) {
      const at = now();
      for (const [known, { until }] of answers) if (until <= at) answers.delete(known);
      const kept = answers.get(key);
      if (kept !== undefined) return kept.answer;
      const answer = read();
      answers.set(key, { until: Number.POSITIVE_INFINITY, answer });
      answer.then(
        () => answers.set(key, { until: now() + forMs, answer }),
        () => answers.delete(key),
      );
      return answer;
    },
  };
}
