import type { RoutedEvent } from '../../fanout/routed-event.js';
import { eventTime, relayData } from '../relay-event.js';
import { standardSignature } from '../standard-signature.js';
import { JSON_CONTENT_TYPE, type RelayRequest } from './relay-request.js';

/** Options of {@link formatStandard}. */
export interface StandardFormatOptions {
  /** The route's keys, from `parseWebhookSecret`, the current one first; one signature each. */
  keys: readonly Buffer[];
  /** The try's time, ms since the epoch: `webhook-timestamp` is its whole seconds. @defaultValue Date.now() */
  nowMs?: number;
  /** The body to sign and send (a route's transformed body). @defaultValue {@link standardBody} of the event */
  body?: string;
}

/** The Standard Webhooks body of an event: `{"type","timestamp","data"}`, `timestamp` the event's time (ISO 8601). */
export function standardBody(event: RoutedEvent): string {
  return JSON.stringify({ type: event.type, timestamp: eventTime(event), data: relayData(event) });
}

/**
 * One try of an event in Standard Webhooks form: `webhook-id` the event id (the same on every try and every
 * route, so receivers deduplicate), `webhook-timestamp` the try's time in seconds, `webhook-signature` one
 * `v1,` signature per key. Sign each try anew: receivers refuse a timestamp more than 5 minutes old.
 */
export function formatStandard(event: RoutedEvent, options: StandardFormatOptions): RelayRequest {
  const body = options.body ?? standardBody(event);
  const timestampSeconds = Math.floor((options.nowMs ?? Date.now()) / 1000);
  return {
    headers: {
      'content-type': JSON_CONTENT_TYPE,
      'webhook-id': event.id,
      'webhook-timestamp': String(timestampSeconds),
      'webhook-signature': standardSignature(options.keys, { id: event.id, timestampSeconds, body }),
    },
    body,
  };
}
