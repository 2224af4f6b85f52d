import type { RedisClient } from '../redis/connection.js';
import { relayStatsKey } from '../redis/keys.js';

/** What a route's tries came to since the last flush. */
interface Pending {
  delivered: number;
  /** Failed tries since the last delivery of this window (all of them when there was none). */
  failedSinceDelivery: number;
  sawDelivery: boolean;
  lastError?: string;
}

/** Options of {@link RelayStats}. */
export interface RelayStatsOptions {
  redis: RedisClient;
  prefix: string;
  /** How often the counts are written to Redis. @defaultValue 250 */
  flushMs?: number;
  /** Called after a flush with a route's consecutive failed tries (shared by every receiver) and its last error. */
  onFailing?: (route: string, failing: number, lastError: string) => void;
}

/**
 * Each route's counts in Redis (`<prefix>:relay:<route>`), shared by every receiver: tries delivered, failed tries in
 * a row (`failing`, back to 0 on a delivery), the last error and when. Counted in memory and written a few times a
 * second, so that a delivery costs no Redis round trip of its own.
 */
export class RelayStats {
  readonly #options: RelayStatsOptions;
  readonly #pending = new Map<string, Pending>();
  readonly #timer: NodeJS.Timeout;
  #flushing: Promise<void> = Promise.resolve();

  constructor(options: RelayStatsOptions) {
    this.#options = options;
    this.#timer = setInterval(() => void this.flush(), options.flushMs ?? 250);
    this.#timer.unref();
  }

  #of(route: string): Pending {
    let pending = this.#pending.get(route);
    if (pending === undefined) this.#pending.set(route, (pending = { delivered: 0, failedSinceDelivery: 0, sawDelivery: false }));
    return pending;
  }

  delivered(route: string): void {
    const pending = this.#of(route);
    pending.delivered += 1;
    pending.sawDelivery = true;
    pending.failedSinceDelivery = 0;
  }

  failed(route: string, message: string): void {
    const pending = this.#of(route);
    pending.failedSinceDelivery += 1;
    pending.lastError = message;
  }

  /** Writes what was counted; a failed write keeps nothing back (counts are for people, not for delivery). */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write()).catch(() => undefined);
    return this.#flushing;
  }

  async #write(): Promise<void> {
    const { redis, prefix } = this.#options;
    const entries = [...this.#pending];
    this.#pending.clear();
    for (const [route, pending] of entries) {
      const key = relayStatsKey(prefix, route);
      const now = new Date().toISOString();
      const multi = redis.multi().hincrby(key, 'delivered', pending.delivered);
      if (pending.sawDelivery) multi.hset(key, 'failing', pending.failedSinceDelivery, 'lastDeliveredAt', now).hdel(key, 'alerted');
      else multi.hincrby(key, 'failing', pending.failedSinceDelivery);
      if (pending.lastError !== undefined) multi.hset(key, 'lastError', pending.lastError, 'lastErrorAt', now);
      multi.hget(key, 'failing');
      const answers = await multi.exec();
      const failing = Number(answers?.at(-1)?.[1] ?? 0);
      if (failing > 0 && pending.lastError !== undefined) this.#options.onFailing?.(route, failing, pending.lastError);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
