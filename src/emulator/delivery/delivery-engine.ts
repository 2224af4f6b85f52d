import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { OnlineWebhookSettings, WebhookSettings } from '../../arcgis/webhook-settings.js';
import type { OnlineWebhook, Webhook } from '../../arcgis/webhook.js';
import { utcDay, type Clock } from '../clock.js';
import type { DeliveryRecord, EmulatorEvent } from '../types.js';
import { buildOnlinePayload, type OnlineEvent } from './build-online-payload.js';
import { buildPayload, type BuiltPayload } from './build-payload.js';
import { FailureLog, shouldDeactivate } from './deactivation-policy.js';
import { deliver, type DeliverOptions, type RetrySettings } from './deliver.js';
import { DeliveryLog, type DeliveryLogOptions, type NotificationStatus } from './delivery-log.js';
import { httpTransport, type HookTransport, type PostHook } from './post-hook.js';

export { matchesChangeType } from './match-change-type.js';
export type { NotificationStatus } from './delivery-log.js';

/** The part of a pino logger the engine uses. */
export interface DeliveryLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Options of {@link DeliveryEngine}. */
export interface DeliveryEngineOptions extends DeliveryLogOptions, Pick<DeliverOptions, 'secondsToMs' | 'sleep'> {
  /** Sends one delivery POST. @defaultValue Node's HTTP client with kept-alive connections, closed with the engine */
  post?: PostHook;
  /** The emulator clock: event times, attempt times and the UTC day failures count on. */
  clock: Clock;
  /** The current organisation-wide settings, read when an event fires and when a delivery fails. */
  getSettings(): WebhookSettings;
  /** Called when a deactivation policy trips (Enterprise: again on each later failure until `resetFailures`). */
  onDeactivate(webhookId: string): void;
  /** REST services root for `statusURL` and `changesUrl`, e.g. `http://127.0.0.1:7080/arcgis/rest/services`. */
  restBaseUrl: string;
  /** The ArcGIS Online organization whose webhooks `fireOnline` delivers: its settings and where its REST services are. */
  online?: {
    getSettings(): OnlineWebhookSettings;
    /** e.g. `http://127.0.0.1:7080/geohookOrg/ArcGIS/rest/services` */
    restBaseUrl: string;
    orgId: string;
  };
  /** @defaultValue no logging */
  logger?: DeliveryLogger;
}

const silent: DeliveryLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * Fires webhooks: one independent delivery per webhook, so a slow or dead receiver holds up only its
 * own. Keeps a bounded log of deliveries, how each webhook's deliveries ended, its failures per UTC day,
 * and deactivates a webhook through `onDeactivate` when the policy says so.
 */
export class DeliveryEngine {
  readonly #options: DeliveryEngineOptions;
  readonly #logger: DeliveryLogger;
  readonly #failures = new FailureLog();
  readonly #consecutiveFailures = new Map<string, number>();
  readonly #log: DeliveryLog;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  readonly #transport: HookTransport;

  constructor(options: DeliveryEngineOptions) {
    // Every delivery in flight (and its sleep between attempts) listens for close: thousands at a time
    // under load, none of them a leak.
    setMaxListeners(0, this.#abort.signal);
    this.#options = options;
    this.#logger = options.logger ?? silent;
    this.#log = new DeliveryLog(options);
    this.#transport = options.post === undefined ? httpTransport() : { post: options.post, close: () => undefined };
  }

  /**
   * Starts one delivery of `event` per active webhook and returns their records at once (pending; they
   * update as attempts are made). Inactive webhooks are skipped; after `close` nothing is started. `when` is
   * the event's time (`events[0].when`, and the server generations of `changesUrl`).
   */
  fire(webhooks: readonly Webhook[], event: EmulatorEvent, when = this.#options.clock.now()): DeliveryRecord[] {
    if (this.#abort.signal.aborted) return [];
    const settings: RetrySettings = { ...this.#options.getSettings() };
    return webhooks.filter((webhook) => webhook.active).map((webhook) => this.#startEnterprise(webhook, event, when, settings));
  }

  /**
   * ArcGIS Online: starts one delivery of `event` per webhook (an edit: the active ones; the test ping: the
   * webhooks given, active or not) with the organization's settings: no wait between attempts, and a webhook
   * deactivated after `numberOfFailures` consecutive failed deliveries, its failure log cleared then and on
   * any success.
   */
  fireOnline(webhooks: readonly OnlineWebhook[], event: OnlineEvent, when = this.#options.clock.now()): DeliveryRecord[] {
    if (this.#abort.signal.aborted) return [];
    const online = this.#options.online;
    if (online === undefined) throw new Error('fireOnline needs the engine built with an Online organization (options.online)');
    const { notificationAttempts, notificationTimeOutInSeconds } = online.getSettings();
    const settings: RetrySettings = { notificationAttempts, notificationTimeOutInSeconds, notificationElapsedTimeInSeconds: 0 };
    return webhooks
      .filter((webhook) => event.kind === 'ping' || webhook.active)
      .map((webhook) => {
        const payload = buildOnlinePayload(webhook, event, { restBaseUrl: online.restBaseUrl, orgId: online.orgId, when });
        return this.#start(webhook.globalId, webhook.hookUrl, payload, settings, (record) => this.#finishOnline(record));
      });
  }

  #startEnterprise(webhook: Webhook, event: EmulatorEvent, when: number, settings: RetrySettings): DeliveryRecord {
    const payload = buildPayload(webhook, event, { restBaseUrl: this.#options.restBaseUrl, when });
    return this.#start(webhook.id, webhook.hookUrl, payload, settings, (record) => this.#finish(record));
  }

  #start(
    webhookId: string,
    hookUrl: string,
    payload: BuiltPayload,
    settings: RetrySettings,
    finish: (record: DeliveryRecord) => void,
  ): DeliveryRecord {
    const record: DeliveryRecord = {
      id: randomUUID(),
      webhookId,
      hookUrl,
      event: payload.eventType,
      contentType: payload.contentType,
      attempts: [],
      outcome: 'pending',
    };
    if (payload.signature !== undefined) record.signatureHeader = payload.signatureHeader;
    this.#log.add(record);
    const { secondsToMs, sleep, clock } = this.#options;
    const options: DeliverOptions = { post: this.#transport.post, secondsToMs, sleep, now: () => clock.now(), signal: this.#abort.signal };
    const run: Promise<void> = deliver(record, payload, settings, options)
      .then(() => finish(record))
      .catch((err: unknown) => this.#logger.error({ err, webhookId: record.webhookId }, 'delivery bookkeeping failed'))
      .finally(() => this.#inFlight.delete(run));
    this.#inFlight.add(run);
    return record;
  }

  #finish(record: DeliveryRecord): void {
    const context = { webhookId: record.webhookId, deliveryId: record.id, attempts: record.attempts.length };
    if (record.outcome === 'failed' && this.#abort.signal.aborted) return; // cut short by close: not the receiver's fault
    const at = this.#options.clock.now();
    this.#log.addStatus(record.webhookId, { invoked: record.outcome === 'delivered', invokedTimestamp: at });
    if (record.outcome === 'delivered') {
      this.#logger.info(context, 'webhook delivered');
      return;
    }
    this.#failures.record(record.webhookId, at);
    this.#logger.warn({ ...context, lastAttempt: record.attempts.at(-1) }, 'webhook delivery failed');
    if (shouldDeactivate(this.#failures.failuresByDay(record.webhookId), utcDay(at), this.#options.getSettings())) {
      this.#logger.warn(context, 'webhook deactivated by the failure policy');
      this.#options.onDeactivate(record.webhookId);
    }
  }

  #finishOnline(record: DeliveryRecord): void {
    const context = { webhookId: record.webhookId, deliveryId: record.id, attempts: record.attempts.length };
    if (record.outcome === 'failed' && this.#abort.signal.aborted) return;
    if (record.outcome === 'delivered') {
      this.#consecutiveFailures.delete(record.webhookId);
      this.#log.clearStatuses(record.webhookId);
      this.#logger.info(context, 'webhook delivered');
      return;
    }
    const failures = (this.#consecutiveFailures.get(record.webhookId) ?? 0) + 1;
    this.#log.addStatus(record.webhookId, { invoked: false, invokedTimestamp: this.#options.clock.now() });
    this.#logger.warn({ ...context, lastAttempt: record.attempts.at(-1), consecutiveFailures: failures }, 'webhook delivery failed');
    if (failures < (this.#options.online?.getSettings().numberOfFailures ?? 1)) {
      this.#consecutiveFailures.set(record.webhookId, failures);
      return;
    }
    this.#consecutiveFailures.delete(record.webhookId);
    this.#log.clearStatuses(record.webhookId);
    this.#logger.warn(context, 'webhook deactivated after consecutive failures');
    this.#options.onDeactivate(record.webhookId);
  }

  /** ArcGIS Online: the webhook's failed deliveries since its last success or deactivation. */
  consecutiveFailures(webhookId: string): number {
    return this.#consecutiveFailures.get(webhookId) ?? 0;
  }

  /** Every delivery kept (the last `maxDeliveries`), oldest first; pending ones are live objects. */
  deliveries(): DeliveryRecord[] {
    return this.#log.records();
  }

  /** One entry per finished delivery of the webhook: `invoked` true when delivered. */
  notificationStatus(webhookId: string): NotificationStatus[] {
    return this.#log.statuses(webhookId);
  }

  /** The webhook's failed deliveries per UTC day number. */
  failuresByDay(webhookId: string): Map<number, number> {
    return this.#failures.failuresByDay(webhookId);
  }

  /** Clears the webhook's failure count and notification status (activateAll, delete). */
  resetFailures(webhookId: string): void {
    this.#failures.clear(webhookId);
    this.#log.clearStatuses(webhookId);
  }

  /** Resolves once no delivery is in flight. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /** Aborts every delivery in flight (not counted as failures), waits for them, and starts no more. */
  async close(): Promise<void> {
    this.#abort.abort();
    await this.idle();
    this.#transport.close();
  }
}
