import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/connection.js';

/** Takes the lease, or keeps it when this holder has it: 1 when held after the call. */
const HOLD = `
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

/** Gives the lease up when this holder still has it. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * A lease in Redis that one process at a time holds for `ttlMs` and renews while it works: the others wait for it
 * to lapse (a holder that dies is replaced within `ttlMs`). It saves work, not correctness: what the holder does is
 * checked in Redis anyway.
 */
export class FanoutLease {
  readonly #redis: RedisClient;
  readonly #key: string;
  readonly #ttlMs: number;
  readonly #token = randomUUID();

  constructor(redis: RedisClient, key: string, ttlMs: number) {
    this.#redis = redis;
    this.#key = key;
    this.#ttlMs = ttlMs;
  }

  /** Takes or renews the lease; true while this process holds it. */
  async hold(): Promise<boolean> {
    return (await this.#redis.eval(HOLD, 1, this.#key, this.#token, this.#ttlMs)) === 1;
  }

  async release(): Promise<void> {
    await this.#redis.eval(RELEASE, 1, this.#key, this.#token);
  }
}
