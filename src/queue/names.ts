import type { EventFamily } from './envelope.js';

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

/** The Redis hash of watermarks (highest server generation handed over, by scope), under the prefix. */
export const watermarksKey = (prefix: string): string => `${prefix}:watermarks`;
