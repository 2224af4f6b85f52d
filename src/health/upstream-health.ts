import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { AdminClient } from '../admin/types.js';
import type { ServiceName } from '../arcgis/service-name.js';
import { messageOf } from '../errors.js';
import type { UpstreamState } from '../queue/service-report.js';
import type { RedisClient } from '../redis/connection.js';
import { upstreamFailuresKey, upstreamKey } from '../redis/keys.js';
import type { EnsureAction } from '../registration/ensure-webhook.js';
import type { AlertSender } from './alert-sender.js';
import { createPendingScopes } from './pending-scopes.js';
import { createRecoveryWatch, type RecoveryWatch } from './recovery-watch.js';

/** Options of {@link UpstreamHealth}. */
export interface UpstreamHealthOptions {
  redis: RedisClient;
  /** Key prefix (`GEOHOOK_PREFIX`). */
  prefix: string;
  /** The hook registered: backfill scopes start with it. */
  hook: string;
  /** The queue of gaps: "recovered" waits until a reactivated webhook's gaps are filled. */
  backfillQueue: () => Queue;
  alert?: AlertSender;
  logger: Logger;
  /** Failures kept per service. @defaultValue 1000 */
  historySize?: number;
  /** Longest wait for the gaps of a reactivated webhook. @defaultValue 600000 */
  recoveryTimeoutMs?: number;
  /** @defaultValue 500 */
  recoveryPollMs?: number;
}

/** What a registration pass did to a service's webhook, and why when it changed it (its key, or a deactivation). */
export interface RegistrationOutcome {
  id: string;
  action: EnsureAction;
  reason?: string;
}

/** A failure as the services view says it: its `GEOHOOK_ERR_*` (or Node) code, if any, and its message. */
const describeError = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? `${code}: ${messageOf(err)}` : messageOf(err);
};

/**
 * Watches the registered webhooks from each registration pass (docs/backfill.md#upstream-health): keeps
 * their state and the delivery failures the server reports (`notificationStatus`, which the server clears on
 * deactivation) in Redis, and sends the alerts `webhook.failing`, `webhook.deactivated` and, once the gaps a
 * deactivation left are backfilled ({@link UpstreamHealth.confirmRecovery}), `webhook.recovered`.
 */
export class UpstreamHealth {
  private readonly options: UpstreamHealthOptions;
  private readonly log: Logger;
  /** The services whose recovery this receiver is confirming, one loop for all. */
  private readonly recovering: RecoveryWatch;

  constructor(options: UpstreamHealthOptions) {
    this.options = options;
    this.log = options.logger.child({ component: 'upstream-health' });
    this.recovering = createRecoveryWatch({
      pendingScopes: createPendingScopes(options.backfillQueue, options.redis),
      hook: options.hook,
      onRecovered: (service, webhookId) => this.recovered(service, webhookId),
      logger: this.log,
      timeoutMs: options.recoveryTimeoutMs ?? 600_000,
      pollMs: options.recoveryPollMs ?? 500,
    });
  }

  private get stateKey(): string {
    return upstreamKey(this.options.prefix);
  }

  private failuresKey(service: ServiceName): string {
    return upstreamFailuresKey(this.options.prefix, service);
  }

  /** Records what a registration pass found and did; returns the failures new since the last check. */
  async observe(service: ServiceName, outcome: RegistrationOutcome, client: AdminClient): Promise<number> {
    const { redis } = this.options;
    const now = Date.now();
    // A webhook just created has no failed delivery to read.
    const fresh = outcome.action === 'created' ? 0 : await this.recordFailures(service, outcome.id, client);
    const before = await this.state(service);
    const deactivated = outcome.action === 'reactivated';
    // This check passed: the failure of an earlier one is history.
    const { checkError: _passed, ...kept } = before ?? {};
    const state: UpstreamState = {
      ...kept,
      webhookId: outcome.id,
      active: true,
      deactivations: (before?.deactivations ?? 0) + (deactivated ? 1 : 0),
      checkedAt: now,
      product: client.product,
      ...(deactivated ? { deactivatedAt: now } : {}),
      ...(outcome.reason === undefined ? {} : { cause: { at: now, text: outcome.reason } }),
    };
    await redis.hset(this.stateKey, service, JSON.stringify(state));
    const alert = this.options.alert;
    if (deactivated) {
      await alert?.({
        event: 'webhook.deactivated',
        service,
        webhookId: outcome.id,
        text: `geohook: the GIS server deactivated the webhook on ${service}; geohook reactivated it and is backfilling the edits it missed`,
      });
    } else if (fresh > 0) {
      await alert?.({
        event: 'webhook.failing',
        service,
        webhookId: outcome.id,
        failures: fresh,
        text: `geohook: the GIS server reports ${fresh} failed deliver${fresh === 1 ? 'y' : 'ies'} of the webhook on ${service}`,
      });
    }
    return fresh;
  }

  /** Records why the upstream check of `service` failed (its code and message), for the services view; a passing check clears it. */
  async checkFailed(service: ServiceName, err: unknown): Promise<void> {
    const before = await this.state(service);
    if (before === undefined) return;
    const state: UpstreamState = { ...before, checkError: { at: Date.now(), text: describeError(err) } };
    await this.options.redis.hset(this.stateKey, service, JSON.stringify(state));
  }

  /** The state kept for `service`, if any. */
  async state(service: ServiceName): Promise<UpstreamState | undefined> {
    const text = await this.options.redis.hget(this.stateKey, service);
    return text === null ? undefined : (JSON.parse(text) as UpstreamState);
  }

  /** Every service's state. */
  async states(): Promise<Record<ServiceName, UpstreamState>> {
    const all = await this.options.redis.hgetall(this.stateKey);
    return Object.fromEntries(Object.entries(all).map(([service, text]) => [service, JSON.parse(text) as UpstreamState]));
  }

  /** The failures kept for `service` (epoch ms, oldest first). */
  async failures(service: ServiceName): Promise<number[]> {
    const withScores = await this.options.redis.zrange(this.failuresKey(service), '0', '-1', 'WITHSCORES');
    return withScores.filter((_member, index) => index % 2 === 1).map(Number);
  }

  /** Gauges of every service's state, read from Redis at scrape time. */
  registerMetrics(registry: Registry): void {
    const states = (): Promise<Record<ServiceName, UpstreamState>> => this.states();
    // One round trip for every service's count.
    const failureCounts = async (services: ServiceName[]): Promise<number[]> => {
      const pipeline = this.options.redis.pipeline();
      for (const service of services) pipeline.zcard(this.failuresKey(service));
      return ((await pipeline.exec()) ?? []).map(([err, count]) => (err === null ? Number(count) : 0));
    };
    new Gauge({
      name: 'geohook_upstream_webhook_active',
      help: 'Whether the registered webhook of a service is active after the last registration pass',
      labelNames: ['service'],
      registers: [registry],
      async collect() {
        try {
          for (const [service, state] of Object.entries(await states())) this.set({ service }, state.active ? 1 : 0);
        } catch {
          // Redis is unreachable: keep the last values.
        }
      },
    });
    new Gauge({
      name: 'geohook_upstream_deactivations',
      help: 'Times geohook found the registered webhook of a service deactivated by the GIS server (and reactivated it)',
      labelNames: ['service'],
      registers: [registry],
      async collect() {
        try {
          for (const [service, state] of Object.entries(await states())) this.set({ service }, state.deactivations);
        } catch {
          // Redis is unreachable: keep the last values.
        }
      },
    });
    new Gauge({
      name: 'geohook_upstream_failures',
      help: 'Delivery failures the GIS server reported for the registered webhook of a service, kept by geohook',
      labelNames: ['service'],
      registers: [registry],
      async collect() {
        try {
          const services = Object.keys(await states());
          const counts = await failureCounts(services);
          services.forEach((service, index) => this.set({ service }, counts[index]!));
        } catch {
          // Redis is unreachable: keep the last values.
        }
      },
    });
  }

  /** Waits for the recoveries in progress to end (they stop waiting for their gaps). */
  async close(): Promise<void> {
    await this.recovering.close();
  }

  /** Keeps the failures `notificationStatus` lists (none on ArcGIS Online, which has no such operation). */
  private async recordFailures(service: ServiceName, webhookId: string, client: AdminClient): Promise<number> {
    if (client.product === 'online') return 0;
    let statuses: { invoked: boolean; invokedTimestamp: number }[];
    try {
      statuses = await client.webhooks.notificationStatus(service, webhookId);
    } catch (err) {
      // A server before 11.2 has no notificationStatus: the webhook's state is still watched.
      this.log.debug({ err, service }, 'no notification status');
      return 0;
    }
    const failed = statuses.filter((status) => !status.invoked).map((status) => status.invokedTimestamp);
    if (failed.length === 0) return 0;
    const key = this.failuresKey(service);
    // Scored by time; two failures of one millisecond are told apart by their rank within it, so that the same
    // list read again adds nothing.
    const ranks = new Map<number, number>();
    const members = failed.flatMap((at) => {
      const rank = ranks.get(at) ?? 0;
      ranks.set(at, rank + 1);
      return [String(at), `${at}#${rank}`];
    });
    const added = await this.options.redis.zadd(key, 'NX', ...members);
    await this.options.redis.zremrangebyrank(key, 0, -(this.options.historySize ?? 1000) - 1);
    return Number(added);
  }

  /**
   * At the end of a pass, once the watermarks were brought up to date: when the server deactivated the webhook
   * since the last confirmed recovery (found in this pass, or in one that failed after it), sends
   * `webhook.recovered` as soon as no gap of the service waits to be filled (in the background, one loop for
   * every service recovering; {@link close} stops the wait). Otherwise, or while such a wait is running, does nothing.
   */
  async confirmRecovery(service: ServiceName, webhookId: string): Promise<void> {
    if (this.recovering.has(service)) return;
    const state = await this.state(service);
    if (state?.deactivatedAt === undefined || (state.recoveredAt ?? 0) >= state.deactivatedAt) return;
    this.recovering.add(service, webhookId);
  }

  /** Records that `service` recovered and alerts it. */
  private async recovered(service: ServiceName, webhookId: string): Promise<void> {
    const state = await this.state(service);
    if (state !== undefined) await this.options.redis.hset(this.stateKey, service, JSON.stringify({ ...state, recoveredAt: Date.now() }));
    await this.options.alert?.({
      event: 'webhook.recovered',
      service,
      webhookId,
      text: `geohook: the webhook on ${service} is active again and the edits it missed are backfilled`,
    });
  }
}
