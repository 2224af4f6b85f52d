import pMap from 'p-map';
import type { Logger } from 'pino';
import { adminUnavailable } from '../admin/admin-unavailable.js';
import type { AdminClient } from '../admin/types.js';
import type { ServiceName } from '../arcgis/service-name.js';
import type { Webhook } from '../arcgis/webhook.js';
import { GeohookError, messageOf } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { registrationLockKey } from '../redis/keys.js';
import { withLock, type LockOptions } from '../redis/lock.js';
import { backoffMs, FailureStreak } from '../retry/failure-streak.js';
import type { HookKeys } from '../signature/hook-keys.js';
import { applyOrgConfig, hasOrgConfig, type OrgConfig } from './apply-org-config.js';
import { ensureWebhook, settledWebhook, type DesiredWebhook, type EnsureAction, type EnsureOutcome } from './ensure-webhook.js';
import { planPass } from './plan-pass.js';
import { ServiceStates, type RegistrationSummary } from './service-states.js';

/** Options of {@link Registration}. */
export interface RegistrationOptions {
  client: AdminClient;
  /** The admin root the client talks to (`ADMIN_URL`), named when it cannot be used. */
  adminUrl: string;
  /** Redis for the lock, the generated keys and the failing services. */
  redis: RedisClient;
  /** The receiver's keys: a generated key is added there before any webhook is signed with it. */
  hookKeys: HookKeys;
  /** Key prefix of the locks (`GEOHOOK_PREFIX`). */
  prefix: string;
  /** The hook registered (`default`). */
  hook: string;
  /** Services, each `folder/name.Type` or `name.Type`, and patterns of them (`Hosted/*`), resolved at each pass. */
  services: readonly string[];
  /** `$PUBLIC_URL/webhooks/<hook>`. */
  hookUrl: string;
  /** The configured key to register; `undefined`: a generated one kept in Redis. */
  configuredKey: string | undefined;
  /** Feature-service triggers. */
  changeTypes: readonly string[];
  logger: Logger;
  /** From the start of a pass to the start of the next. @defaultValue 300000 */
  intervalMs?: number;
  /** Services checked at once. @defaultValue 16 */
  concurrency?: number;
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
   * (docs/backfill.md). A failure is logged and the service tried again on its own after the retry backoff.
   */
  onRegistered?: (
    service: ServiceName,
    outcome: { id: string; action: EnsureAction; reason?: string },
    client: AdminClient,
  ) => Promise<void>;
  /** Called when `onRegistered` failed for the service, with why (the services view shows it until a check passes). */
  onCheckFailed?: (service: ServiceName, err: unknown) => Promise<void>;
}

/** The organisation-wide webhook list of a service, or `undefined` when the server has none. */
type Listed = readonly Webhook[] | undefined;

/**
 * Registers the receiver's hook on each service at start-up, then checks again on an interval so that a
 * deleted webhook is recreated and a deactivated one reactivated (docs/registration.md). A pass resolves the
 * services once (findServices, the organisation-wide webhook list) and checks them a bounded number at a time;
 * a service that fails is tried again on its own with backoff, and never holds the others back. Failures are
 * logged; they never throw out of the timer.
 */
export class Registration {
  private readonly options: RegistrationOptions;
  private readonly log: Logger;
  private readonly states: ServiceStates;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  /** Whether a pass has tried every service once. */
  private tried = false;
  /** Why the full passes in a row could not work at all (the admin API unusable, organisation settings refused). */
  private readonly passFailures: FailureStreak;
  private nextPassAt = 0;
  /** No retry before this (epoch ms): the admin API could not be used by the last one. */
  private retriesPausedUntil = 0;
  /** Whether the organisation settings and placement policies are applied (or there are none to apply). */
  private orgApplied = false;
  /** Why they were refused, and when they are applied again on their own. */
  private orgError: { reason: string; failures: number; retryAt: number } | undefined;
  private desired: DesiredWebhook | undefined;
  private lastPassMs: number | undefined;

  constructor(options: RegistrationOptions) {
    this.options = options;
    this.log = options.logger.child({ component: 'registration', hook: options.hook });
    this.states = new ServiceStates({
      redis: options.redis,
      prefix: options.prefix,
      hook: options.hook,
      backoffMs: (n) => this.backoffMs(n),
    });
    this.passFailures = new FailureStreak({
      logger: this.log,
      subject: 'registration',
      failingMessage: 'registration incomplete: retrying',
      // Each retry in brief: a few in the first minute, then one a minute (the longest backoff).
      repeatMs: 0,
      initialMs: options.retryInitialMs,
      maxMs: options.retryMaxMs,
    });
  }

  /** Starts the first pass now; later passes and retries follow on their own. */
  start(): void {
    this.schedule();
  }

  /**
   * Runs a pass now, unless one is running (after Redis came back: what was refused meanwhile is then
   * backfilled without waiting for the interval).
   */
  passNow(): void {
    if (this.running !== undefined || this.closed) return;
    this.nextPassAt = 0;
    this.schedule();
  }

  /**
   * Why `/readyz` is not ready yet: undefined once a pass has tried every service, registered or not (those that
   * are not are in {@link summary}), unless the organisation settings or placement policies were refused.
   */
  notReadyReason(): string | undefined {
    if (this.passFailures.cause !== undefined) return `registration failed: ${this.passFailures.cause}`;
    if (!this.tried) return 'registration pending';
    return this.orgError === undefined ? undefined : `registration failed: ${this.orgError.reason}`;
  }

  /** Where registration stands, service by service. */
  summary(): RegistrationSummary {
    return { ...this.states.summary(), ...(this.lastPassMs === undefined ? {} : { lastPassSeconds: this.lastPassMs / 1000 }) };
  }

  /** Stops the timer and waits for a pass in progress. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private backoffMs(failures: number): number {
    return backoffMs(failures, { initialMs: this.options.retryInitialMs, maxMs: this.options.retryMaxMs });
  }

  /** The next run: the full pass when it is due, else the retries of failed services when one is. */
  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    const retryAt = Math.max(Math.min(this.states.nextRetryAt() ?? Infinity, this.orgError?.retryAt ?? Infinity), this.retriesPausedUntil);
    const delayMs = Math.max(0, Math.min(this.nextPassAt, retryAt) - Date.now());
    this.timer = setTimeout(() => {
      const run = Date.now() >= this.nextPassAt ? this.pass() : this.retry();
      this.running = run.finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, delayMs);
    this.timer.unref();
  }

  /** A full pass: every service, the interval counted from its start. */
  private async pass(): Promise<void> {
    const startedAt = Date.now();
    this.nextPassAt = startedAt + (this.options.intervalMs ?? 300_000);
    try {
      await this.ensureAll();
      this.lastPassMs = Date.now() - startedAt;
      this.passFailures.succeeded();
    } catch (err) {
      const error = this.passFailed(err);
      // The cause once, then in brief while it stays the same.
      if (this.closed) return;
      this.nextPassAt = Date.now() + this.passFailures.failed(error);
    }
  }

  /** The services whose retry is due, on their own, and the organisation settings when theirs is. */
  private async retry(): Promise<void> {
    try {
      if (this.orgError !== undefined && this.orgError.retryAt <= Date.now()) await this.applyOrg();
      await this.ensureEach(this.states.due(Date.now()), () => undefined, false);
    } catch (err) {
      // The admin API unusable: the next full pass, sooner, says why; the retries wait for it.
      this.log.debug({ err }, 'retry of failed services stopped');
      this.retriesPausedUntil = Date.now() + this.backoffMs(this.passFailures.failures);
      this.nextPassAt = Math.min(this.nextPassAt, this.retriesPausedUntil);
    }
  }

  /**
   * The reason a pass failed as a whole. The admin API that cannot be used at all (unreachable, not an admin root,
   * no token, credentials refused) is said in one line with its fix, the error's stack left to debug; anything
   * unexpected is logged whole.
   */
  private passFailed(err: unknown): string {
    const reason = adminUnavailable(err, this.options.adminUrl);
    if (reason !== undefined) {
      this.log.debug({ err }, 'registration failed');
      return reason;
    }
    this.log.error({ err }, 'registration failed');
    return messageOf(err);
  }

  /** One pass over every service; throws when the admin API cannot be used or the organisation settings were refused. */
  private async ensureAll(): Promise<void> {
    const { redis, hookKeys, hook, client, adminUrl } = this.options;
    const signatureKey = this.options.configuredKey ?? (await hookKeys.ensureGenerated(redis, hook));
    // Keys another replica generated (or a rotation added) verify here too.
    await hookKeys.load(redis);
    this.desired = { hookUrl: this.options.hookUrl, signatureKey, changeTypes: this.options.changeTypes };
    if (!this.orgApplied) await this.applyOrg();
    const plan = await planPass(client, this.options.services, adminUrl, this.log);
    await this.states.plan([...plan.services, ...plan.missing], plan.unmatched);
    for (const pattern of plan.unmatched) this.log.warn({ pattern }, 'a REGISTER pattern matched no service on the GIS server');
    for (const service of plan.missing) await this.serviceFailed(service, `service ${service} not found on the GIS server`);
    const listed = (service: ServiceName): Listed => (plan.webhooks === undefined ? undefined : (plan.webhooks.get(service) ?? []));
    await this.ensureEach(plan.services, listed, plan.catalogued);
    if (!this.tried) {
      const { registered, failingCount } = this.states.summary();
      this.log.info({ registered, failing: failingCount }, 'registration done');
    }
    this.tried = true;
  }

  /**
   * Applies the organisation settings and placement policies until they succeed once; while they are refused, the
   * receiver is not ready and they are applied again on their own after the backoff.
   */
  private async applyOrg(): Promise<void> {
    const org = this.options.org;
    const failed = org !== undefined && hasOrgConfig(org) ? await applyOrgConfig(this.options.client, org, this.log) : [];
    this.orgApplied = failed.length === 0;
    if (this.orgApplied) {
      this.orgError = undefined;
      return;
    }
    const failures = (this.orgError?.failures ?? 0) + 1;
    this.orgError = { reason: failed.join('; '), failures, retryAt: Date.now() + this.backoffMs(failures - 1) };
  }

  /** Ensures each of `services`, a bounded number at a time; stops at, and throws, an admin API that cannot be used. */
  private async ensureEach(services: readonly ServiceName[], listed: (service: ServiceName) => Listed, catalogued: boolean): Promise<void> {
    let unusable: unknown;
    await pMap(
      services,
      async (service) => {
        if (unusable !== undefined || this.closed) return;
        try {
          await this.ensureOne(service, listed(service), catalogued);
        } catch (err) {
          unusable = err;
        }
      },
      { concurrency: this.options.concurrency ?? 16 },
    );
    if (unusable !== undefined) throw unusable;
  }

  /**
   * One service: nothing to do when the organisation's list shows its webhook settled; otherwise, under the
   * service's lock, {@link ensureWebhook}. Then its health check. Its own failure is recorded and retried; the admin
   * API failing (every service alike) is thrown.
   */
  private async ensureOne(service: ServiceName, listed: Listed, exists: boolean): Promise<void> {
    const { redis, hook, prefix, client } = this.options;
    const desired = this.desired!;
    let outcome: EnsureOutcome;
    try {
      outcome =
        (listed && settledWebhook(listed, desired)) ??
        (await withLock(
          redis,
          registrationLockKey(prefix, hook, service),
          () => ensureWebhook(client, service, desired, this.log, exists),
          this.options.lock,
        ));
    } catch (err) {
      if (adminUnavailable(err, this.options.adminUrl) !== undefined) throw err;
      if (!(err instanceof GeohookError)) this.log.error({ err, service }, 'registration of a service failed');
      await this.serviceFailed(service, messageOf(err));
      return;
    }
    const { id, action, reason } = outcome;
    const level = action === 'unchanged' ? 'debug' : 'info';
    this.log[level]({ service, webhookId: id, action, ...(reason === undefined ? {} : { reason }) }, `webhook ${action}`);
    const registered = { id, action, ...(reason === undefined ? {} : { reason }) };
    const healthy = await (this.options.onRegistered?.(service, registered, client) ?? Promise.resolve()).then(
      () => true,
      async (err: unknown) => {
        this.log.warn({ err, service }, 'upstream check failed');
        await this.options.onCheckFailed?.(service, err).catch((recordErr: unknown) => {
          this.log.debug({ err: recordErr, service }, 'the failed upstream check could not be recorded');
        });
        return false;
      },
    );
    await this.states.succeeded(service, healthy);
  }

  /** Records a service that could not be registered: its cause once, then in brief while it stays the same. */
  private async serviceFailed(service: ServiceName, reason: string): Promise<void> {
    const before = this.states.reasonOf(service);
    const state = await this.states.failed(service, reason);
    const retryInMs = state.retryAt - Date.now();
    if (before === reason) this.log.debug({ service, retryInMs }, 'service still not registered, same cause: retrying it alone');
    else this.log.warn({ service, reason, retryInMs }, 'service not registered: retrying it alone');
  }
}
