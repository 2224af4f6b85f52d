import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { AdminClient } from '../admin/types.js';
import type { ServiceName } from '../arcgis/service-name.js';
import { GeohookError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { generatedKeysKey, registrationLockKey } from '../redis/keys.js';
import { withLock } from '../redis/lock.js';
import { newGeneratedKey } from '../signature/hook-keys.js';

/** Options of {@link rotateKey}. */
export interface RotateKeyOptions {
  client: AdminClient;
  /** The Redis the receivers keep their generated keys in. */
  redis: RedisClient;
  /** `GEOHOOK_PREFIX`. */
  prefix: string;
  /** The hook whose generated key is rotated. @defaultValue 'default' */
  hook?: string;
  /** `$PUBLIC_URL/webhooks/<hook>`: the webhooks switched are those with this hookUrl. */
  hookUrl: string;
  /** Services to switch (`REGISTER`). */
  services: readonly ServiceName[];
  /**
   * Wait between adding the new key and switching the webhooks, so that every replica has reloaded its keys
   * (`keyReloadSeconds`, 5 s by default). @defaultValue 10000
   */
  propagationMs?: number;
  /** Wait between switching the webhooks and dropping the old key (deliveries signed before the switch). @defaultValue 60000 */
  graceMs?: number;
  logger?: Logger;
}

/** One service's outcome: the webhooks with our hookUrl switched to the new key (none: `not-found`). */
export interface RotatedService {
  service: ServiceName;
  webhookIds: string[];
  action: 'updated' | 'not-found';
}

/** What {@link rotateKey} did. The keys themselves are never returned. */
export interface RotateKeyResult {
  status: 'success';
  services: RotatedService[];
}

/**
 * Rotates the generated signature key of a hook without a rejected delivery: adds a new random key first in
 * the Redis list (every replica accepts old and new once it has reloaded), waits `propagationMs`, edits each
 * service's webhook with our hookUrl to the new key (under the registration lock), waits `graceMs`, then
 * removes the old key. Throws `GEOHOOK_ERR_REGISTRATION` when no key was generated yet, and the admin
 * client's error when an edit fails (the old key is then kept: both still verify).
 */
export async function rotateKey(options: RotateKeyOptions): Promise<RotateKeyResult> {
  const { client, redis, prefix, hookUrl, services } = options;
  const hook = options.hook ?? 'default';
  const list = generatedKeysKey(prefix, hook);
  const oldKey = await redis.lindex(list, 0);
  if (oldKey === null)
    throw new GeohookError('GEOHOOK_ERR_REGISTRATION', `no generated key for hook ${hook} in Redis (${list}): nothing to rotate`);
  const newKey = newGeneratedKey();
  await redis.lpush(list, newKey);
  options.logger?.info({ hook }, 'new signature key added; waiting for the replicas to reload');
  await sleep(options.propagationMs ?? 10_000);
  const rotated: RotatedService[] = [];
  for (const service of services) {
    const lockKey = registrationLockKey(prefix, hook, service);
    const webhookIds = await withLock(redis, lockKey, async () => {
      const ours = (await client.webhooks.listAll(service)).filter((webhook) => webhook.hookUrl === hookUrl);
      for (const webhook of ours) await client.webhooks.edit(service, webhook.id, { signatureKey: newKey });
      return ours.map((webhook) => webhook.id);
    });
    options.logger?.info({ service, webhookIds }, 'webhook switched to the new signature key');
    rotated.push({ service, webhookIds, action: webhookIds.length === 0 ? 'not-found' : 'updated' });
  }
  await sleep(options.graceMs ?? 60_000);
  await redis.lrem(list, 0, oldKey);
  options.logger?.info({ hook }, 'old signature key removed');
  return { status: 'success', services: rotated };
}
