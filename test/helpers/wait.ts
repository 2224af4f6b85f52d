import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';

/** How long {@link waitFor} waits, and how often it looks. */
export interface WaitOptions {
  /** @defaultValue 20_000 */
  timeoutMs?: number;
  /** @defaultValue 20 */
  intervalMs?: number;
}

/**
 * Calls `check` until it returns something other than `undefined` or `false`, and resolves to that; rejects
 * with "timed out after N ms waiting for `what`" once `timeoutMs` has passed (with the last error `check`
 * threw, if any, as the cause). A throwing `check` is retried: what it reads may not exist yet.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 20_000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const result = await check();
      if (result !== undefined && result !== false) return result;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, lastError === undefined ? {} : { cause: lastError });
    await sleep(intervalMs);
  }
}

/** Resolves once no job of `queue` waits, is delayed or runs: every job added before has been handled. */
export function queueDrained(queue: Pick<Queue, 'getJobCounts'>, what: string, options?: WaitOptions): Promise<true> {
  return waitFor(
    what,
    async () => Object.values(await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active')).every((n) => n === 0),
    options,
  );
}
