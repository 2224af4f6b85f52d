import { ConfigError } from '../errors.js';

/**
 * The secrets of relay routes (docs/relays.md), checked when the configuration is loaded: a Standard Webhooks
 * `whsec_` key, or a Power Automate route's shared secret. No message quotes a secret.
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
