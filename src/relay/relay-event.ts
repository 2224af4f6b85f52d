import { readableJobData } from '../events/stored-event.js';
import { isChangeEvent, type RoutedEvent } from '../fanout/routed-event.js';

/**
 * The event as a receiver is sent it (`data` of a Standard Webhooks body, the Power Automate body): a change
 * event as it is; a stored event as consumers get it, its payload parsed, without the base64 `rawBody`
 * (the relay signs its own body, and the bytes would double the size).
 */
export function relayData(event: RoutedEvent): unknown {
  return isChangeEvent(event) ? event : readableJobData(event);
}

/** When the event happened, ISO 8601: a change's edit time (`ts`), else when the delivery was received. */
export const eventTime = (event: RoutedEvent): string => (isChangeEvent(event) ? event.ts : event.receivedAt);
