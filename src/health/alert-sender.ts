import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connection.js';
import { alertDebounceKey } from '../redis/keys.js';
import { alertText } from './alert-text.js';

/** What an alert is about (docs/backfill.md#alerts). */
export type AlertEvent =
  | 'webhook.failing'
  | 'webhook.deactivated'
  | 'webhook.recovered'
  | 'gap.backfilled'
  | 'change.unresolvable'
  | 'relay.failing'
  | 'subscription.lagging';

/** An alert: what happened, a line for a person, and typed fields. */
export interface Alert {
  event: AlertEvent;
  /** The service (`folder/name.FeatureServer`), or the backfill scope, it is about: alerts are debounced per event and subject. */
  service: string;
  /**
   * One line for a person: Slack's and Teams' incoming webhooks show it as the message. It names `service` as
   * that field holds it; the sender makes the name plain and escapes the line ({@link alertText}).
   */
  text: string;
  [field: string]: unknown;
}

/** Options of {@link createAlertSender}. */
export interface AlertSenderOptions {
  /** ALERT_URL. */
  url: string;
  /** Shortest time between two alerts of one event about one service, ms (shared by every receiver through Redis). */
  debounceMs: number;
  redis: RedisClient;
  /** Key prefix (`GEOHOOK_PREFIX`). */
  prefix: string;
  logger: Logger;
  /** Each POST. @defaultValue 10000 */
  timeoutMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

/** Sends an alert unless one of its event and service was sent within the debounce time; never throws. */
export type AlertSender = (alert: Alert) => Promise<void>;

/**
 * POSTs alerts as JSON (`{event, text, service, …fields, at}`, `text` made safe by {@link alertText}), debounced with a Redis key per event and service
 * (`<prefix>:alerts:<event>:<service>`), so that several receivers send one. A failed POST is logged.
 */
export function createAlertSender(options: AlertSenderOptions): AlertSender {
  const { url, debounceMs, redis, prefix, timeoutMs = 10_000 } = options;
  const fetchFn = options.fetch ?? globalThis.fetch;
  const log = options.logger.child({ component: 'alerts' });
  return async (alert) => {
    try {
      if (debounceMs > 0) {
        const first = await redis.set(alertDebounceKey(prefix, alert.event, alert.service), '1', 'PX', debounceMs, 'NX');
        if (first === null) return log.debug({ event: alert.event, service: alert.service }, 'alert debounced');
      }
      const body = JSON.stringify({ ...alert, text: alertText(alert.text, alert.service), at: new Date().toISOString() });
      const response = await fetchFn(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`the alert URL answered ${response.status}`);
      log.info({ event: alert.event, service: alert.service }, 'alert sent');
    } catch (err) {
      log.warn({ err, event: alert.event, service: alert.service }, 'alert not sent');
    }
  };
}
