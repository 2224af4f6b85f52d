import { ConfigError, GeohookError } from '../errors.js';
import { computeDigest } from '../signature/sign.js';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the `webhook-signature` header holds
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one per secret, separated by spaces, so that a
 * receiver rotating its secret verifies under the old or the new one. The HMAC itself is computed in
 * `signature/sign.ts`, the one place that does.
 */

/** What one Standard Webhooks request is signed over. */
export interface StandardSignedContent {
  /** `webhook-id`: stable across tries, so receivers deduplicate. Must not hold a `.`. */
  id: string;
  /** `webhook-timestamp`: the try's time, whole seconds since the epoch. */
  timestampSeconds: number;
  /** The exact body sent. */
  body: string;
}

/**
 * The `webhook-signature` value of a request: `v1,<base64 HMAC-SHA256>` under each key, in order, separated by
 * a space. Throws a `GEOHOOK_ERR_CONFIG` error when there is no key, and a `GEOHOOK_ERR_INTERNAL` one when the id
 * holds a `.` or the timestamp is not a whole number (either would let one signed content pass for another).
 */
export function standardSignature(keys: readonly Buffer[], content: StandardSignedContent): string {
  const { id, timestampSeconds, body } = content;
  if (keys.length === 0) throw new ConfigError('a Standard Webhooks route needs at least one secret');
  if (id.includes('.') || !Number.isSafeInteger(timestampSeconds))
    throw new GeohookError(
      'GEOHOOK_ERR_INTERNAL',
      `cannot sign webhook-id ${JSON.stringify(id)} at ${timestampSeconds}: an id holds no "." and a timestamp is whole seconds`,
    );
  const signed = `${id}.${timestampSeconds}.${body}`;
  return keys.map((key) => `v1,${computeDigest(key, signed).toString('base64')}`).join(' ');
}
