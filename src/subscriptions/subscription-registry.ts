import { SUBSCRIPTION_NAME, type SubscriptionConfig } from '../config/subscription-schema.js';
import { ConfigError } from '../errors.js';
import { subscriptionQueueName } from '../queue/names.js';
import { openQueue } from '../queue/open-queue.js';
import type { RedisClient } from '../redis/connection.js';
import { eventLogKey, fanoutKey, subscriptionDroppedKey, subscriptionsKey } from '../redis/keys.js';

/** A subscription as geohook keeps it: what it takes, and since when. */
export interface SubscriptionDefinition extends SubscriptionConfig {
  /** Who made it: GEOHOOK_CONFIG or `geohook subscriptions create` (the config never deletes one of the latter). */
  readonly origin: 'config' | 'runtime';
  /** ISO 8601. */
  readonly createdAt: string;
  /** The event log's last entry when it was made: it takes the entries after it. */
  readonly after: string;
  /** Made with `--from`: the time from which it read the log back (ISO 8601). */
  readonly from?: string;
}

/** The fan-out's name of a subscription's destination, and of its field among the dropped counts and catch-ups. */
export const subscriptionDestinationName = (name: string): string => `sub:${name}`;

/**
 * Creates (or, for one the config made, updates) a subscription in one call: its definition with the log's last
 * entry as `after`, a catch-up from a time when asked, the version of the subscriptions raised (the fan-out matches
 * its next run against the new set). Answers `created`, `updated`, `unchanged` or `exists` (made by the other origin,
 * or at run time with other filters).
 * KEYS: the definitions, the fan-out's state, the event log. ARGV: name, definition (JSON without `after` and
 * `createdAt`), origin, the time (ISO), the catch-up start (`<ms>-0`, or ''), its field.
 */
const CREATE = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local old = cjson.decode(current)
  if old.origin ~= ARGV[3] or ARGV[3] ~= 'config' then return 'exists' end
  local new = cjson.decode(ARGV[2])
  new.after, new.createdAt, new.origin = old.after, old.createdAt, old.origin
  new.from = old.from
  local encoded = cjson.encode(new)
  if encoded == current then return 'unchanged' end
  redis.call('HSET', KEYS[1], ARGV[1], encoded)
  redis.call('HINCRBY', KEYS[2], 'version', 1)
  return 'updated'
end
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)[1]
local definition = cjson.decode(ARGV[2])
definition.after = last and last[1] or '0-0'
definition.createdAt = ARGV[4]
definition.origin = ARGV[3]
redis.call('HSETNX', KEYS[2], 'cursor', '0-0')
if ARGV[5] ~= '' then redis.call('HSET', KEYS[2], ARGV[6], ARGV[5]) end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(definition))
redis.call('HINCRBY', KEYS[2], 'version', 1)
return 'created'`;

/** Deletes a definition, its catch-up and dropped count, and raises the version: 1 when there was one. KEYS: definitions, state, dropped. ARGV: name, its destination name. */
const DELETE = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], 'catchup:' .. ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('HINCRBY', KEYS[2], 'version', 1)
return 1`;

/** What creating a subscription did. */
export type CreateOutcome = 'created' | 'updated' | 'unchanged' | 'exists';

/** The subscriptions in Redis (docs/subscriptions.md): made from the config at start-up and by `geohook subscriptions`. */
export class SubscriptionRegistry {
  readonly #redis: RedisClient;
  readonly #prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** The connection it reads and writes on. */
  get connection(): RedisClient {
    return this.#redis;
  }

  /**
   * Makes a subscription: it takes every event stored after this resolves (with `from`, also those the log still
   * holds from that time on). A config subscription that exists is brought up to its definition (its start kept).
   */
  async create(subscription: SubscriptionConfig, options: { origin: 'config' | 'runtime'; from?: Date }): Promise<CreateOutcome> {
    if (!SUBSCRIPTION_NAME.test(subscription.name))
      throw new ConfigError(
        `subscription "${subscription.name}": lower-case letters, digits and "-", starting with a letter or digit, at most 63`,
      );
    const { from } = options;
    const definition = { ...subscription, ...(from === undefined ? {} : { from: from.toISOString() }) };
    const keys = [subscriptionsKey(this.#prefix), fanoutKey(this.#prefix), eventLogKey(this.#prefix)];
    const catchUp = from === undefined ? '' : `${from.getTime()}-0`;
    const field = `catchup:${subscriptionDestinationName(subscription.name)}`;
    const args = [subscription.name, JSON.stringify(definition), options.origin, new Date().toISOString(), catchUp, field];
    return (await this.#redis.eval(CREATE, keys.length, ...keys, ...args)) as CreateOutcome;
  }

  /** Every subscription, by name. */
  async list(): Promise<SubscriptionDefinition[]> {
    const all = await this.#redis.hgetall(subscriptionsKey(this.#prefix));
    return Object.values(all)
      .map((json) => JSON.parse(json) as SubscriptionDefinition)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The version of the subscriptions: raised by every change. */
  async version(): Promise<string> {
    return (await this.#redis.hget(fanoutKey(this.#prefix), 'version')) ?? '0';
  }

  /** Deletes a subscription and its queue (events waiting, dead letters); false when there was none. */
  async delete(name: string): Promise<boolean> {
    const keys = [subscriptionsKey(this.#prefix), fanoutKey(this.#prefix), subscriptionDroppedKey(this.#prefix)];
    const deleted = (await this.#redis.eval(DELETE, keys.length, ...keys, name, subscriptionDestinationName(name))) === 1;
    const queue = openQueue(subscriptionQueueName(name), { connection: this.#redis, prefix: this.#prefix, skipWaitingForReady: true });
    try {
      await queue.obliterate({ force: true });
    } finally {
      await queue.close();
    }
    return deleted;
  }
}
