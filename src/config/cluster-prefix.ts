import { ConfigError } from '../errors.js';

/** True when `prefix` puts every key of a queue in one cluster slot: it holds a non-empty `{hash tag}`. */
export function isHashTagged(prefix: string): boolean {
  return /^[^{]*\{[^}]+\}/.test(prefix);
}

/**
 * BullMQ's rule for Redis Cluster: the prefix must be a hash tag, so that a queue's keys (and geohook's
 * dedup keys, which the accept script writes with the jobs of all three queues) share one slot. Throws a {@link ConfigError} naming GEOHOOK_PREFIX otherwise.
 */
export function assertClusterPrefix(prefix: string): void {
  if (!isHashTagged(prefix)) {
    throw new ConfigError(
      `GEOHOOK_PREFIX: with a Redis Cluster it must hold a hash tag, such as {${prefix.replace(/[{}]/g, '') || 'geohook'}} (BullMQ's rule: a queue's keys in one slot)`,
    );
  }
}
