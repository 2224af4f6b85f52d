import type { DeliveryRecord } from '../types.js';

/** One entry of `GET …/webhooks/<id>/notificationStatus` (`webhookNotificationStatus`). */
export interface NotificationStatus {
  /** True when the delivery got a 2xx, false when it used up its attempts. */
  invoked: boolean;
  /** When the delivery finished, epoch ms of the emulator clock. */
  invokedTimestamp: number;
}

/** Options of {@link DeliveryLog}. */
export interface DeliveryLogOptions {
  /**
   * Deliveries kept; the oldest are dropped first.
   * @defaultValue 10000
   */
  maxDeliveries?: number;
  /**
   * Notification statuses kept per webhook; the oldest are dropped first.
   * @defaultValue 1000
   */
  maxStatusesPerWebhook?: number;
}

/**
 * Appends `item`, keeping the last `max` (and up to as many again until the next trim): dropping the
 * oldest at every push would move the whole list each time.
 */
function pushBounded<T>(list: T[], item: T, max: number): void {
  list.push(item);
  if (list.length >= 2 * max) list.splice(0, list.length - max);
}

/** The last `max` items of `list`. */
function lastOf<T>(list: readonly T[], max: number): T[] {
  return list.slice(Math.max(0, list.length - max));
}

/** The bounded memory of the delivery engine: every delivery record, and per webhook how each one ended. */
export class DeliveryLog {
  readonly #records: DeliveryRecord[] = [];
  readonly #statuses = new Map<string, NotificationStatus[]>();
  readonly #maxDeliveries: number;
  readonly #maxStatuses: number;

  constructor(options: DeliveryLogOptions = {}) {
    this.#maxDeliveries = Math.max(1, options.maxDeliveries ?? 10_000);
    this.#maxStatuses = Math.max(1, options.maxStatusesPerWebhook ?? 1000);
  }

  /** Keeps a record (the live object: a pending delivery keeps updating it). */
  add(record: DeliveryRecord): void {
    pushBounded(this.#records, record, this.#maxDeliveries);
  }

  /** The records kept, oldest first. */
  records(): DeliveryRecord[] {
    return lastOf(this.#records, this.#maxDeliveries);
  }

  /** Notes how a delivery of `webhookId` ended. */
  addStatus(webhookId: string, status: NotificationStatus): void {
    let list = this.#statuses.get(webhookId);
    if (list === undefined) {
      list = [];
      this.#statuses.set(webhookId, list);
    }
    pushBounded(list, status, this.#maxStatuses);
  }

  /** How the deliveries of `webhookId` ended, oldest first (copies). */
  statuses(webhookId: string): NotificationStatus[] {
    return lastOf(this.#statuses.get(webhookId) ?? [], this.#maxStatuses).map((status) => ({ ...status }));
  }

  /** Forgets the statuses of `webhookId` (activateAll clears the failure log). */
  clearStatuses(webhookId: string): void {
    this.#statuses.delete(webhookId);
  }
}
