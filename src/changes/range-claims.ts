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

/**
 * For each scope not resolving a range already: a scope seen for the first time starts at its watermark (what came
 * before is not replayed); one whose watermark moved past what is resolved claims `(resolved, end]`, recorded as
 * pending, and is resolved up to `end`: the watermark, or sooner where the origin of the generations changes (the
 * origins' lines the accept script writes, `to\torigin`), so that a range reached geohook one way. The lines a claim
 * passes are dropped. ARGV: the origin of generations no line covers (moved before origins were recorded), the
 * time, then the scopes. Returns scope, from, to, origin quadruples.
 */
const CLAIM_LUA = `
local watermarks, resolved, pending, origins = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- The lines of a scope's origins, each {to, origin}.
local function originsOf(scope)
  local lines = {}
  for to, origin in string.gmatch(redis.call('HGET', origins, scope) or '', '(%d+)\\t(%a+)') do
    lines[#lines + 1] = { to, origin }
  end
  return lines
end
-- Drops the lines of a scope at or below generation upTo.
local function dropOrigins(scope, lines, upTo)
  local left = {}
  for _, line in ipairs(lines) do
    if tonumber(line[1]) > tonumber(upTo) then left[#left + 1] = line[1] .. '\\t' .. line[2] end
  end
  if #left == #lines then return end
  if #left == 0 then redis.call('HDEL', origins, scope) else redis.call('HSET', origins, scope, table.concat(left, '\\n')) end
end
local claimed = {}
for i = 3, #ARGV do
  local scope = ARGV[i]
  if redis.call('HEXISTS', pending, scope) == 0 then
    local mark = redis.call('HGET', watermarks, scope)
    if mark then
      local done = redis.call('HGET', resolved, scope)
      if not done then
        redis.call('HSET', resolved, scope, mark)
        dropOrigins(scope, originsOf(scope), mark)
      elseif tonumber(mark) > tonumber(done) then
        local lines = originsOf(scope)
        local upTo, origin = mark, ARGV[1]
        for _, line in ipairs(lines) do
          if tonumber(line[1]) > tonumber(done) then
            if tonumber(line[1]) < tonumber(mark) then upTo = line[1] end
            origin = line[2]
            break
          end
        end
        redis.call('HSET', pending, scope, done .. '\\t' .. upTo .. '\\t' .. ARGV[2] .. '\\t' .. origin)
        redis.call('HSET', resolved, scope, upTo)
        dropOrigins(scope, lines, upTo)
        claimed[#claimed + 1] = scope
        claimed[#claimed + 1] = done
        claimed[#claimed + 1] = upTo
        claimed[#claimed + 1] = origin
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
      redis.defineCommand('geohookClaimRanges', { numberOfKeys: 4, lua: CLAIM_LUA });
      redis.defineCommand('geohookReleaseRange', { numberOfKeys: 1, lua: RELEASE_LUA });
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
