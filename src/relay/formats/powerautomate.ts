import { SHARED_SECRET_HEADER } from '../../config/relay-secrets.js';
import type { RoutedEvent } from '../../fanout/routed-event.js';
import { relayData } from '../relay-event.js';
import { JSON_CONTENT_TYPE, type RelayRequest } from './relay-request.js';

/** Options of {@link formatPowerAutomate}. */
export interface PowerAutomateFormatOptions {
  /** Sent in {@link SHARED_SECRET_HEADER}; none, no header (the flow then runs for anyone holding its URL). */
  secret?: string;
  /** The body to send (a route's transformed body). @defaultValue the event JSON */
  body?: string;
}

/**
 * An event for a Power Automate flow ("When an HTTP request is received"), which cannot compute an HMAC: the
 * event JSON as the body, the shared secret in {@link SHARED_SECRET_HEADER}, and `webhook-id` (the event id)
 * for flows that keep the ids they have handled.
 */
export function formatPowerAutomate(event: RoutedEvent, options: PowerAutomateFormatOptions = {}): RelayRequest {
  const headers: Record<string, string> = { 'content-type': JSON_CONTENT_TYPE, 'webhook-id': event.id };
  if (options.secret !== undefined) headers[SHARED_SECRET_HEADER] = options.secret;
  return { headers, body: options.body ?? JSON.stringify(relayData(event)) };
}
