import type { Redis } from 'ioredis';

/** The fan-out's lease as a probe sees it through a row: who held it, and when each holder took or renewed it. */
export interface LeaseWatch {
  /** Reads the lease now: its holder's token, undefined when none holds it or Redis does not answer. */
  holder(): Promise<string | undefined>;
  /**
   * Whether killing a process at `atMs` struck the living holder `token`: it took or renewed the lease after
   * `aliveAfterMs` (it lived through the kills before) and never after `atMs` (a holder that lives on renews it
   * before it runs out, however slow its turns).
   */
  struck(token: string, atMs: number, aliveAfterMs: number): boolean;
  stop(): void;
}

/**
 * Reads the lease (`key`: its holder's token and time to live) every `everyMs` with `probe` (a connection that fails at
 * once while Redis is down), noting each take (a new token) and renewal (its time to live risen). Times are
 * `performance.now()`.
 */
export function watchLease(probe: Redis, key: string, everyMs = 50): LeaseWatch {
  const renewals = new Map<string, number[]>();
  let last: { token: string; ttl: number } | undefined;
  let stopped = false;
  const sample = async (): Promise<string | undefined> => {
    const [token, ttl] = await Promise.all([probe.get(key), probe.pttl(key)]);
    if (token === null || ttl < 0) return undefined;
    if (last?.token !== token || ttl > last.ttl) renewals.set(token, [...(renewals.get(token) ?? []), performance.now()]);
    last = { token, ttl };
    return token;
  };
  void (async () => {
    // Until stopped, or its probe is closed (a row that failed).
    while (!stopped && probe.status !== 'end') {
      await sample().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    holder: () => sample().catch(() => undefined),
    struck(token, atMs, aliveAfterMs) {
      const times = renewals.get(token) ?? [];
      return times.some((at) => at > aliveAfterMs && at <= atMs) && !times.some((at) => at > atMs);
    },
    stop: () => void (stopped = true),
  };
}
