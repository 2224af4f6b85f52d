import { randomBytes } from 'node:crypto';
import type { HookConfig } from '../config/load-config.js';
import type { RedisClient } from '../redis/connection.js';
import { generatedKeysKey } from '../redis/keys.js';

/** Options of {@link HookKeys}. */
export interface HookKeysOptions {
  /** The configured hooks; their `secrets` always verify and come first. */
  hooks: ReadonlyMap<string, HookConfig>;
  /** Key prefix of the lists of generated keys (`GEOHOOK_PREFIX`). */
  prefix: string;
}

/** Bytes of randomness in a generated key (base64url: 43 characters). */
export const GENERATED_KEY_BYTES = 32;

/** A new random signature key of {@link GENERATED_KEY_BYTES} bytes, base64url. */
export function newGeneratedKey(): string {
  return randomBytes(GENERATED_KEY_BYTES).toString('base64url');
}

/** Pushes `ARGV[1]` only when the list is empty, so that every replica ends up with the same first key. */
const ENSURE_KEY_SCRIPT = `
if redis.call('LLEN', KEYS[1]) == 0 then redis.call('RPUSH', KEYS[1], ARGV[1]) end
return redis.call('LRANGE', KEYS[1], 0, -1)`;

/**
 * The signature keys of each hook: the configured ones, then those geohook generated and keeps in Redis
 * (`<prefix>:hooks:<hook>:keys`, a list, the current key first). The webhook route reads them from memory;
 * Redis is read only by {@link load} and {@link ensureGenerated}.
 */
export class HookKeys {
  private readonly hooks: ReadonlyMap<string, HookConfig>;
  private readonly prefix: string;
  private current: Map<string, HookConfig>;

  constructor(options: HookKeysOptions) {
    this.hooks = options.hooks;
    this.prefix = options.prefix;
    this.current = new Map(options.hooks);
  }

  /** The Redis list holding the keys generated for `hook`. */
  redisKey(hook: string): string {
    return generatedKeysKey(this.prefix, hook);
  }

  /** The hook with every key that verifies it (configured first), or undefined for an unknown hook. */
  get(name: string): HookConfig | undefined {
    return this.current.get(name);
  }

  /** The keys generated for `hook`, as last read from Redis. */
  generated(hook: string): readonly string[] {
    const configured = this.hooks.get(hook)?.secrets.length ?? 0;
    return this.current.get(hook)?.secrets.slice(configured) ?? [];
  }

  /** Reads the generated keys of every hook from Redis; rejects after `timeoutMs` without an answer. */
  async load(redis: RedisClient, timeoutMs = 5000): Promise<void> {
    const names = [...this.hooks.keys()];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const lists = await Promise.race([Promise.all(names.map((name) => redis.lrange(this.redisKey(name), 0, -1))), timeout]);
      names.forEach((name, index) => this.setGenerated(name, lists[index]!));
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The current generated key of `hook`: the one in Redis, or a new random one stored there first (once for
   * every replica and restart). The receiver accepts it from then on.
   */
  async ensureGenerated(redis: RedisClient, hook: string): Promise<string> {
    const candidate = newGeneratedKey();
    const keys = (await redis.eval(ENSURE_KEY_SCRIPT, 1, this.redisKey(hook), candidate)) as string[];
    this.setGenerated(hook, keys);
    return keys[0]!;
  }

  private setGenerated(name: string, keys: readonly string[]): void {
    const hook = this.hooks.get(name);
    if (hook === undefined) return;
    const extra = keys.filter((key) => key !== '' && !hook.secrets.includes(key));
    const next = new Map(this.current);
    next.set(name, extra.length === 0 ? hook : { ...hook, secrets: [...hook.secrets, ...extra] });
    this.current = next;
  }
}
