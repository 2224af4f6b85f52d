import type { EventFamily } from '../events/envelope.js';

/** The BullMQ queue of each event family (docs/events.md). */
export const queueNames = {
  gp: 'gp-events',
  feature: 'feature-events',
  unknown: 'unknown-events',
} as const satisfies Record<EventFamily, string>;

export type QueueName = (typeof queueNames)[EventFamily];

export const allQueueNames: readonly QueueName[] = Object.values(queueNames);

/** The queue of ranges of server generations geohook fetches itself (docs/backfill.md). */
export const backfillQueueName = 'backfill';

/** The queue of a subscription (docs/subscriptions.md): every event it takes, job id the event's. */
export const subscriptionQueueName = (subscription: string): string => `sub-${subscription}`;
