import { readFileSync } from 'node:fs';
import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/connection.js';
import { changesOriginsKey, changesPendingKey, changesResolvedKey, watermarksKey } from '../redis/keys.js';
import type { ChangeSource } from './change-event.js';

/** A range of a scope: the generations in `(from, to]`. */
export interface ScopeRange {
  scope: string;
  from: number;
  to: number;
}

/** How a claimed range reached geohook: delivered by a webhook, found by the backfill of a gap, or by a poll. */
export type RangeOrigin = Extract<ChangeSource['origin'], 'webhook' | 'backfill' | 'poll'>;

/** A range of a scope to resolve, and how its generations reached geohook (all of them the same way). */
export interface ClaimedRange extends ScopeRange {
  origin: RangeOrigin;
}

/** The origin of generations whose watermark moved before origins were recorded. */
const UNRECORDED_ORIGIN: RangeOrigin = 'webhook';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    geohookClaimRanges(
      watermarks: string,
      resolved: string,
      pending: string,
      origins: string,
      ...args: string[]
    ): Result<string[], Context>;
    geohookReleaseRange(pending: string, scope: string, prefix: string): Result<number, Context>;
  }
}

/** Claims the next range of each scope that has one (`claim-ranges.lua`, beside this module: its header says how). */
const claimLua = readFileSync(new URL('./claim-ranges.lua', import.meta.url), 'utf8');

/** Releases a scope's pending range once resolved (or failed for good), if it is still that range (`release-range.lua`). */
const releaseLua = readFileSync(new URL('./release-range.lua', import.meta.url), 'utf8');

/**
 * The ranges change events are resolved in: each scope follows its watermark (docs/backfill.md), one range at a
 * time, so every server generation a watermark passes is resolved exactly once, whichever delivery, backfill or
 * poll moved it, and however many receivers run. Each range is of one origin, the way its generations reached
 * geohook, as recorded when the watermark moved over them.
 */
export class RangeClaims {
  readonly #redis: RedisClient;
  readonly #keys: [string, string, string, string];
  readonly #pending: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#pending = changesPendingKey(prefix);
    this.#keys = [watermarksKey(prefix), changesResolvedKey(prefix), this.#pending, changesOriginsKey(prefix)];
    if (typeof redis.geohookClaimRanges !== 'function') {
      redis.defineCommand('geohookClaimRanges', { numberOfKeys: 4, lua: claimLua });
      redis.defineCommand('geohookReleaseRange', { numberOfKeys: 1, lua: releaseLua });
    }
  }

  /** Claims the next range of each of `scopes` that has one. */
  async claim(scopes: readonly string[]): Promise<ClaimedRange[]> {
    if (scopes.length === 0) return [];
    const answer = await this.#redis.geohookClaimRanges(...this.#keys, UNRECORDED_ORIGIN, String(Date.now()), ...scopes);
    const claimed: ClaimedRange[] = [];
    for (let index = 0; index + 3 < answer.length; index += 4) {
      const [scope, from, to, origin] = answer.slice(index, index + 4) as [string, string, string, RangeOrigin];
      claimed.push({ scope, from: Number(from), to: Number(to), origin });
    }
    return claimed;
  }

  /** The ranges claimed more than `olderThanMs` ago and not released: their jobs may never have been added. */
  async stale(olderThanMs: number): Promise<ClaimedRange[]> {
    const entries = await this.#redis.hgetall(this.#pending);
    const before = Date.now() - olderThanMs;
    return Object.entries(entries).flatMap(([scope, value]) => {
      const [from, to, at, origin = UNRECORDED_ORIGIN] = value.split('\t');
      return Number(at) < before ? [{ scope, from: Number(from), to: Number(to), origin: origin as RangeOrigin }] : [];
    });
  }

  /** Releases `range`: its scope may claim the next one. */
  async release(range: ScopeRange): Promise<void> {
    await this.#redis.geohookReleaseRange(this.#pending, range.scope, `${range.from}\t${range.to}\t`);
  }
}
