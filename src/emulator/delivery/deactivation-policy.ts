import type { WebhookSettings } from '../../arcgis/webhook-settings.js';
import { DAY_MS, utcDay } from '../clock.js';

/** The two settings of the deactivation policy. */
export type DeactivationPolicy = Pick<WebhookSettings, 'numberOfFailures' | 'daysInPast'>;

/**
 * True when the failures of the last `daysInPast` UTC days, `today` included, reach `numberOfFailures`.
 *
 * A sliding window of whole days: the only reading that fits every example of the product's documentation. With 5 over 5,
 * 2 failures on day 1 and 2 on day 3 never deactivate, yet on day 6 the window is days 2–6, it still
 * holds day 3's two, and three more failures deactivate.
 *
 * @param failuresByDay - failures per UTC day number (see {@link utcDay}).
 * @param today - the UTC day number of now.
 */
export function shouldDeactivate(failuresByDay: ReadonlyMap<number, number>, today: number, policy: DeactivationPolicy): boolean {
  const firstDay = today - policy.daysInPast + 1;
  let failures = 0;
  for (const [day, count] of failuresByDay) {
    if (day >= firstDay && day <= today) failures += count;
  }
  return failures >= policy.numberOfFailures;
}

/** A failure count per UTC day keyed `YYYY-MM-DD`, days in order: how `GET /emulator/webhooks` shows it. */
export function formatFailuresByDay(failuresByDay: ReadonlyMap<number, number>): Record<string, number> {
  const days = [...failuresByDay.keys()].sort((a, b) => a - b);
  const formatted: Record<string, number> = {};
  for (const day of days) formatted[new Date(day * DAY_MS).toISOString().slice(0, 10)] = failuresByDay.get(day) ?? 0;
  return formatted;
}

/**
 * Failed deliveries counted per webhook per UTC calendar day of the emulator clock. One failure is one
 * delivery that used up all its attempts, not one attempt.
 */
export class FailureLog {
  readonly #byWebhook = new Map<string, Map<number, number>>();

  /** Counts one failure of `webhookId` on the UTC day of `at` (epoch ms). */
  record(webhookId: string, at: number): void {
    let days = this.#byWebhook.get(webhookId);
    if (days === undefined) {
      days = new Map();
      this.#byWebhook.set(webhookId, days);
    }
    const day = utcDay(at);
    days.set(day, (days.get(day) ?? 0) + 1);
  }

  /** A copy of the webhook's failures per UTC day number; empty when it has none. */
  failuresByDay(webhookId: string): Map<number, number> {
    return new Map(this.#byWebhook.get(webhookId));
  }

  /** Forgets every failure of the webhook (activateAll, delete). */
  clear(webhookId: string): void {
    this.#byWebhook.delete(webhookId);
  }
}
