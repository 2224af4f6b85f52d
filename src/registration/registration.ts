import type { Logger } from 'pino';
import { adminUnavailable } from '../admin/admin-unavailable.js';
import type { AdminClient } from '../admin/types.js';
import type { ServiceName } from '../arcgis/service-name.js';
import { GeohookError, messageOf } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { registrationLockKey } from '../redis/keys.js';
import { withLock, type LockOptions } from '../redis/lock.js';
import type { HookKeys } from '../signature/hook-keys.js';
import { applyOrgConfig, hasOrgConfig, type OrgConfig } from './apply-org-config.js';
import { ensureWebhook, type EnsureAction } from './ensure-webhook.js';

/** Options of {@link Registration}. */
export interface RegistrationOptions {
  client: AdminClient;
  /** The admin root the client talks to (`ADMIN_URL`), named when it cannot be used. */
  adminUrl: string;
  /** Redis for the lock and the generated keys. */
  redis: RedisClient;
  /** The receiver's keys: a generated key is added there before any webhook is signed with it. */
  hookKeys: HookKeys;
  /** Key prefix of the locks (`GEOHOOK_PREFIX`). */
  prefix: string;
  /** The hook registered (`default`). */
  hook: string;
  /** Services, each `folder/name.Type` or `name.Type`. */
  services: readonly ServiceName[];
  /** `$PUBLIC_URL/webhooks/<hook>`. */
  hookUrl: string;
  /** The configured key to register; `undefined`: a generated one kept in Redis. */
  configuredKey: string | undefined;
  /** Feature-service triggers. */
  changeTypes: readonly string[];
  logger: Logger;
  /** Pause between two checks once registered. @defaultValue 300000 */
  intervalMs?: number;
  /** First pause after a failure; doubled each time up to retryMaxMs. @defaultValue 1000 */
  retryInitialMs?: number;
  /** @defaultValue 60000 */
  retryMaxMs?: number;
  /** Settings and placement policies applied before the first registration (until they succeed once). */
  org?: OrgConfig;
  /** @defaultValue withLock's defaults */
  lock?: LockOptions;
  /**
   * Called after each service's webhook was checked (or created, reactivated, updated), with the client that
   * did it: geohook records the webhook's health and brings the service's watermarks up to date there
   * (docs/backfill.md). A failure is logged and tried again by a pass after the retry backoff.
   */
  onRegistered?: (service: ServiceName, outcome: { id: string; action: EnsureAction }, client: AdminClient) => Promise<void>;
}

/**
 * Registers the receiver's hook on each service at start-up, then checks again on an interval so that a
 * deleted webhook is recreated and a deactivated one reactivated. Failures are logged and retried with
 * backoff; they never throw out of the timer.
 */
export class Registration {
  private readonly options: RegistrationOptions;
  private readonly log: Logger;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private registered = false;
  private lastError: string | undefined;
  private failures = 0;
  /** Passes in a row in which an `onRegistered` call failed: the next pass comes after a backoff, not the interval. */
  private upstreamFailures = 0;
  private upstreamFailed = false;
  private orgApplied = false;

  constructor(options: RegistrationOptions) {
    this.options = options;
    this.log = options.logger.child({ component: 'registration', hook: options.hook });
  }

  /** Starts the first pass now; later passes follow on their own. */
  start(): void {
    this.schedule(0);
  }

  /**
   * Runs a pass now, unless one is running (after Redis came back: what was refused meanwhile is then
   * backfilled without waiting for the interval).
   */
  passNow(): void {
    if (this.running !== undefined || this.closed) return;
    clearTimeout(this.timer);
    this.schedule(0);
  }

  /** Why `/readyz` is not ready yet: undefined once every service was registered once. */
  notReadyReason(): string | undefined {
    if (this.registered) return undefined;
    return this.lastError === undefined ? 'registration pending' : `registration failed: ${this.lastError}`;
  }

  /** Stops the timer and waits for a pass in progress. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => (this.running = undefined));
    }, delayMs);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    const { intervalMs = 300_000, retryInitialMs = 1000, retryMaxMs = 60_000 } = this.options;
    /** The wait after the `n`th failure in a row (from 0): doubling from retryInitialMs up to retryMaxMs. */
    const backoffMs = (n: number): number => Math.min(retryInitialMs * 2 ** n, retryMaxMs);
    const failed = await this.ensureAll().catch((err: unknown) => [this.passFailed(err)]);
    if (failed.length === 0) {
      if (!this.registered) this.log.info({ services: this.options.services }, 'registration done');
      this.registered = true;
      this.lastError = undefined;
      this.failures = 0;
      this.upstreamFailures = this.upstreamFailed ? this.upstreamFailures + 1 : 0;
      // A failed watermark check (the GIS server's REST side, or Redis just back) is tried again soon.
      this.schedule(this.upstreamFailed ? backoffMs(this.upstreamFailures - 1) : intervalMs);
      return;
    }
    const error = failed.join('; ');
    const delayMs = backoffMs(this.failures);
    this.failures += 1;
    // The cause once, then each retry in brief while it stays the same.
    if (!this.closed && error === this.lastError) this.log.warn({ retryInMs: delayMs }, 'registration still failing, same cause: retrying');
    else if (!this.closed) this.log.warn({ retryInMs: delayMs, failed: error }, 'registration incomplete: retrying');
    this.lastError = error;
    this.schedule(delayMs);
  }

  /**
   * The reason a pass failed as a whole. The admin API that cannot be used at all (unreachable, not an admin root,
   * no token, credentials refused) is said in one line with its fix, the error's stack left to debug; anything
   * unexpected is logged whole.
   */
  private passFailed(err: unknown): string {
    const reason = adminUnavailable(err, this.options.adminUrl);
    if (reason === undefined) {
      this.log.error({ err }, 'registration failed');
      return messageOf(err);
    }
    this.log.debug({ err }, 'registration failed');
    return reason;
  }

  /** One pass over every service; returns what failed, one reason per service. */
  private async ensureAll(): Promise<string[]> {
    const { redis, hookKeys, hook, prefix, client } = this.options;
    const signatureKey = this.options.configuredKey ?? (await hookKeys.ensureGenerated(redis, hook));
    // Keys another replica generated (or a rotation added) verify here too.
    await hookKeys.load(redis);
    const desired = { hookUrl: this.options.hookUrl, signatureKey, changeTypes: this.options.changeTypes };
    const failed: string[] = [];
    this.upstreamFailed = false;
    const org = this.options.org;
    if (!this.orgApplied && org !== undefined && hasOrgConfig(org)) {
      const orgFailed = await applyOrgConfig(client, org, this.log);
      failed.push(...orgFailed);
      this.orgApplied = orgFailed.length === 0;
    }
    for (const service of this.options.services) {
      if (this.closed) break;
      try {
        const lockKey = registrationLockKey(prefix, hook, service);
        const { id, action, reason } = await withLock(
          redis,
          lockKey,
          () => ensureWebhook(client, service, desired, this.log),
          this.options.lock,
        );
        const level = action === 'unchanged' ? 'debug' : 'info';
        this.log[level]({ service, webhookId: id, action, ...(reason === undefined ? {} : { reason }) }, `webhook ${action}`);
        await this.options.onRegistered?.(service, { id, action }, client).catch((err: unknown) => {
          this.upstreamFailed = true;
          this.log.warn({ err, service }, 'upstream check failed');
        });
      } catch (err) {
        // The admin API itself failing fails every service alike: the pass stops with one reason.
        if (adminUnavailable(err, this.options.adminUrl) !== undefined) throw err;
        if (err instanceof GeohookError) this.log.debug({ err, service }, 'registration of a service failed');
        else this.log.error({ err, service }, 'registration of a service failed');
        failed.push(`${service}: ${messageOf(err)}`);
      }
    }
    return failed;
  }
}
