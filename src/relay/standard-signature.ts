import { ConfigError, GeohookError } from '../errors.js';
import { computeDigest } from '../signature/sign.js';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the `webhook-signature` header holds
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one per secret, separated by spaces, so that a
 * receiver rotating its secret verifies under the old or the new one. The HMAC itself is computed in
 * `signature/sign.ts`, the one place that does.
 */

/** What a Standard Webhooks symmetric secret starts with. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Fewest key bytes the specification allows (192 bits). */
export const MIN_SECRET_BYTES = 24;

/** Most key bytes the specification allows (512 bits). */
export const MAX_SECRET_BYTES = 64;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The key bytes of a `whsec_` secret: the standard base64 after the prefix, decoded. Throws a
 * `GEOHOOK_ERR_CONFIG` error naming `label` (e.g. `relays[0].secret`) when the prefix is missing, the rest is
 * not standard base64 (padded, no `-` or `_`: the reference libraries refuse those), or the key is not
 * {@link MIN_SECRET_BYTES} to {@link MAX_SECRET_BYTES} bytes long. The message never quotes the secret.
 */
export function parseWebhookSecret(secret: string, label = 'secret'): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX))
    throw new ConfigError(`${label} must be a Standard Webhooks secret: "${WEBHOOK_SECRET_PREFIX}" followed by base64`);
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (encoded.length === 0 || !BASE64.test(encoded))
    throw new ConfigError(`${label} must be "${WEBHOOK_SECRET_PREFIX}" followed by standard base64 (A-Z a-z 0-9 + /, padded with =)`);
  const key = Buffer.from(encoded, 'base64');
  if (key.length < MIN_SECRET_BYTES || key.length > MAX_SECRET_BYTES)
    throw new ConfigError(
      `${label} holds a ${key.length}-byte key; Standard Webhooks keys are ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes`,
    );
  return key;
}

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
