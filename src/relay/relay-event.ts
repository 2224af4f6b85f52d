import type { ChangeEvent } from '../changes/change-event.js';
import type { StoredEvent } from '../events/envelope.js';
import { readableJobData } from '../events/stored-event.js';

/**
 * What a relay sends on: a change event (`change.*`, the job data of the `change-events` queue) or a stored
 * feature or GP event (`feature.*`, `gp.*`, the job data of the event queues).
 */
export type RelayEvent = ChangeEvent | StoredEvent;

/** True for a change event; false for a stored feature, GP or unknown event (those carry a `family`). */
export const isChangeEvent = (event: RelayEvent): event is ChangeEvent => !('family' in event);

/**
 * The event as a receiver is sent it (`data` of a Standard Webhooks body, the Power Automate body): a change
 * event as it is; a stored event as consumers get it, its payload parsed, without the base64 `rawBody`
 * (the relay signs its own body, and the bytes would double the size).
 */
export function relayData(event: RelayEvent): unknown {
  return isChangeEvent(event) ? event : readableJobData(event);
}

/** When the event happened, ISO 8601: a change's edit time (`ts`), else when the delivery was received. */
export const eventTime = (event: RelayEvent): string => (isChangeEvent(event) ? event.ts : event.receivedAt);
