import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/connection.js';
import { changesPendingKey, changesResolvedKey, watermarksKey } from '../redis/keys.js';

/** A range of a scope to resolve: the generations in `(from, to]`. */
export interface ClaimedRange {
  scope: string;
  from: number;
  to: number;
}

declare module 'ioredis' {
  interface RedisCommander<Context> {
    geohookClaimRanges(watermarks: string, resolved: string, pending: string, ...args: string[]): Result<string[], Context>;
    geohookReleaseRange(pending: string, scope: string, prefix: string): Result<number, Context>;
  }
}

/**
 * For each scope not resolving a range already: a scope seen for the first time starts at its watermark (what came
 * before is not replayed); one whose watermark moved past what is resolved claims `(resolved, watermark]`, recorded
 * as pending, and is resolved up to the watermark. ARGV: the time, then the scopes. Returns scope, from, to triples.
 */
const CLAIM_LUA = `
local watermarks, resolved, pending = KEYS[1], KEYS[2], KEYS[3]
local claimed = {}
for i = 2, #ARGV do
  local scope = ARGV[i]
  if redis.call('HEXISTS', pending, scope) == 0 then
    local mark = redis.call('HGET', watermarks, scope)
    if mark then
      local done = redis.call('HGET', resolved, scope)
      if not done then
        redis.call('HSET', resolved, scope, mark)
      elseif tonumber(mark) > tonumber(done) then
        redis.call('HSET', pending, scope, done .. '\\t' .. mark .. '\\t' .. ARGV[1])
        redis.call('HSET', resolved, scope, mark)
        claimed[#claimed + 1] = scope
        claimed[#claimed + 1] = done
        claimed[#claimed + 1] = mark
      end
    end
  end
end
return claimed
`;

/** Releases a scope's pending range once resolved (or failed for good), if it is still that range. */
const RELEASE_LUA = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and string.sub(current, 1, #ARGV[2]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
`;

/**
 * The ranges change events are resolved in: each scope follows its watermark (docs/backfill.md), one range at a
 * time, so every server generation a watermark passes is resolved exactly once, whichever delivery, backfill or
 * poll moved it, and however many receivers run.
 */
export class RangeClaims {
  readonly #redis: RedisClient;
  readonly #keys: [string, string, string];
  readonly #pending: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#pending = changesPendingKey(prefix);
    this.#keys = [watermarksKey(prefix), changesResolvedKey(prefix), this.#pending];
    if (typeof redis.geohookClaimRanges !== 'function') {
      redis.defineCommand('geohookClaimRanges', { numberOfKeys: 3, lua: CLAIM_LUA });
      redis.defineCommand('geohookReleaseRange', { numberOfKeys: 1, lua: RELEASE_LUA });
    }
  }

  /** Claims the next range of each of `scopes` that has one. */
  async claim(scopes: readonly string[]): Promise<ClaimedRange[]> {
    if (scopes.length === 0) return [];
    const answer = await this.#redis.geohookClaimRanges(...this.#keys, String(Date.now()), ...scopes);
    const claimed: ClaimedRange[] = [];
    for (let index = 0; index + 2 < answer.length; index += 3) {
      claimed.push({ scope: answer[index]!, from: Number(answer[index + 1]), to: Number(answer[index + 2]) });
    }
    return claimed;
  }

  /** The ranges claimed more than `olderThanMs` ago and not released: their jobs may never have been added. */
  async stale(olderThanMs: number): Promise<ClaimedRange[]> {
    const entries = await this.#redis.hgetall(this.#pending);
    const before = Date.now() - olderThanMs;
    return Object.entries(entries).flatMap(([scope, value]) => {
      const [from, to, at] = value.split('\t').map(Number) as [number, number, number];
      return at < before ? [{ scope, from, to }] : [];
    });
  }

  /** Releases `range`: its scope may claim the next one. */
  async release(range: ClaimedRange): Promise<void> {
    await this.#redis.geohookReleaseRange(this.#pending, range.scope, `${range.from}\t${range.to}\t`);
  }
}
