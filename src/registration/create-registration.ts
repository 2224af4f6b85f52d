import type { Logger } from 'pino';
import { createAdminClient } from '../admin/admin-client.js';
import type { GeohookConfig } from '../config/load-config.js';
import { REGISTERED_HOOK, wantsRegistration } from '../config/self-registration.js';
import type { RedisClient } from '../redis/connection.js';
import type { HookKeys } from '../signature/hook-keys.js';
import { Registration, type RegistrationOptions } from './registration.js';

/** What {@link createRegistration} needs besides the configuration. */
export interface RegistrationDependencies {
  hookKeys: HookKeys;
  /** Redis for the lock and the generated keys; the caller closes it. */
  redis: RedisClient;
  logger: Logger;
  /** Per-request timeout of the admin client. @defaultValue 10000 */
  adminTimeoutMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** See {@link RegistrationOptions.onRegistered}. */
  onRegistered?: RegistrationOptions['onRegistered'];
  /** See {@link RegistrationOptions.onCheckFailed}. */
  onCheckFailed?: RegistrationOptions['onCheckFailed'];
}

/**
 * The self-registration of the `default` hook that `config` asks for (ADMIN_URL, REGISTER, CHANGE_TYPES,
 * the first HOOK_SECRETS key, `registration` timing, `settings` and `placement`), or undefined when it asks for none. Not started.
 */
export function createRegistration(config: GeohookConfig, deps: RegistrationDependencies): Registration | undefined {
  const admin = config.admin;
  if (admin === undefined || !wantsRegistration(config)) return undefined;
  const client = createAdminClient({
    baseUrl: admin.url,
    ...(admin.auth === undefined ? {} : { auth: admin.auth }),
    ...(deps.fetch === undefined ? {} : { fetch: deps.fetch }),
    timeoutMs: deps.adminTimeoutMs ?? 10_000,
    // Registration retries on its own schedule, with backoff.
    retry: { delaysMs: [] },
  });
  const timing = config.registration;
  return new Registration({
    client,
    adminUrl: admin.url,
    redis: deps.redis,
    hookKeys: deps.hookKeys,
    prefix: config.prefix,
    hook: REGISTERED_HOOK,
    services: admin.register,
    hookUrl: `${config.publicUrl}/webhooks/${REGISTERED_HOOK}`,
    configuredKey: config.hooks.get(REGISTERED_HOOK)?.secrets[0],
    changeTypes: admin.changeTypes,
    org: { settings: admin.settings, placement: admin.placement },
    logger: deps.logger,
    intervalMs: timing.intervalSeconds * 1000,
    concurrency: timing.concurrency,
    retryInitialMs: timing.retryInitialSeconds * 1000,
    retryMaxMs: timing.retryMaxSeconds * 1000,
    ...(deps.onRegistered === undefined ? {} : { onRegistered: deps.onRegistered }),
    ...(deps.onCheckFailed === undefined ? {} : { onCheckFailed: deps.onCheckFailed }),
  });
}
