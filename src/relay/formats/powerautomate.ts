import { ConfigError } from '../../errors.js';
import { relayData, type RelayEvent } from '../relay-event.js';
import { JSON_CONTENT_TYPE, type RelayRequest } from './relay-request.js';

/** The header carrying a Power Automate route's shared secret; the flow's trigger condition compares it. */
export const SHARED_SECRET_HEADER = 'x-geohook-secret';

/** Fewest characters of a shared secret: it is compared as it is, so it must be hard to guess. */
export const MIN_SHARED_SECRET_CHARS = 16;

/** Most characters of a shared secret. */
export const MAX_SHARED_SECRET_CHARS = 256;

const HEADER_SAFE = /^[\x21-\x7e]+$/;

/**
 * A Power Automate route's shared secret, checked: {@link MIN_SHARED_SECRET_CHARS} to
 * {@link MAX_SHARED_SECRET_CHARS} printable ASCII characters without spaces (it travels in a header). Throws a
 * `GEOHOOK_ERR_CONFIG` error naming `label`; the message never quotes the secret.
 */
export function parseSharedSecret(secret: string, label = 'secret'): string {
  if (!HEADER_SAFE.test(secret))
    throw new ConfigError(`${label} must be printable ASCII without spaces (it is sent in the ${SHARED_SECRET_HEADER} header)`);
  if (secret.length < MIN_SHARED_SECRET_CHARS || secret.length > MAX_SHARED_SECRET_CHARS)
    throw new ConfigError(`${label} must be ${MIN_SHARED_SECRET_CHARS} to ${MAX_SHARED_SECRET_CHARS} characters long`);
  return secret;
}

/** Options of {@link formatPowerAutomate}. */
export interface PowerAutomateFormatOptions {
  /** Sent in {@link SHARED_SECRET_HEADER}; none, no header (the flow then runs for anyone holding its URL). */
  secret?: string;
}

/**
 * An event for a Power Automate flow ("When an HTTP request is received"), which cannot compute an HMAC: the
 * event JSON as the body, the shared secret in {@link SHARED_SECRET_HEADER}, and `webhook-id` (the event id)
 * for flows that keep the ids they have handled.
 */
export function formatPowerAutomate(event: RelayEvent, options: PowerAutomateFormatOptions = {}): RelayRequest {
  const headers: Record<string, string> = { 'content-type': JSON_CONTENT_TYPE, 'webhook-id': event.id };
  if (options.secret !== undefined) headers[SHARED_SECRET_HEADER] = options.secret;
  return { headers, body: JSON.stringify(relayData(event)) };
}
