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

/** The Redis hash of watermarks (highest server generation handed over, by scope), under the prefix. */
export const watermarksKey = (prefix: string): string => `${prefix}:watermarks`;

/**
 * The Redis hash of each scope's server generation as the server itself last reported it (its
 * `changeTrackingInfo`): a delivered range ending past it waits for the server to confirm it (docs/backfill.md).
 */
export const serverGensKey = (prefix: string): string => `${prefix}:server-gens`;

/** The Redis hash of the delivered ranges waiting for their server to confirm them, by scope. */
export const aheadKey = (prefix: string): string => `${prefix}:ahead`;

/**
 * The Redis hash of what last happened to each service (docs/backfill.md#the-services-view): field
 * `<activity>\t<folder>/<name>.<Type>`, value the epoch ms it last happened.
 */
export const activityKey = (prefix: string): string => `${prefix}:activity`;

/** The Redis hash of the registered webhooks' state, by service (docs/backfill.md#upstream-health). */
export const upstreamKey = (prefix: string): string => `${prefix}:upstream`;

/** The sorted set of a registered webhook's failed deliveries as the server reported them (score: epoch ms). */
export const upstreamFailuresKey = (prefix: string, service: string): string => `${prefix}:upstream:failures:${service}`;
