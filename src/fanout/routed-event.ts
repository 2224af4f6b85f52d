import type { ChangeEvent } from '../changes/change-event.js';
import type { StoredEvent } from '../events/envelope.js';

/**
 * What the fan-out hands on to relay routes and subscriptions: a change event (`change.*`, the job data of the
 * `change-events` queue) or a stored feature, GP or unknown event (the job data of the event queues).
 */
export type RoutedEvent = ChangeEvent | StoredEvent;

/** True for a change event; false for a stored feature, GP or unknown event (those carry a `family`). */
export const isChangeEvent = (event: RoutedEvent): event is ChangeEvent => !('family' in event);
