import { timingSafeEqual } from 'node:crypto';
import type { AttachmentLinkTarget } from '../arcgis/attachment-link-target.js';
import { computeDigest } from './sign.js';

/** What a link's token holds: its target and when it expires (Unix seconds). */
export interface AttachmentLinkClaims extends AttachmentLinkTarget {
  expiresAtSeconds: number;
}

/** Why a token opens nothing. */
export type AttachmentLinkRefusal = 'invalid' | 'expired';

/** Bound into every MAC, so that the key cannot sign anything else that verifies as a link. */
const PURPOSE = 'geohook-attachment-link:';

/** `<payload>.<mac>`, both base64url; the MAC is 32 bytes (43 characters). */
const TOKEN = /^([A-Za-z0-9_-]{1,2048})\.([A-Za-z0-9_-]{43})$/;

const macOf = (key: Buffer, payload: string): Buffer => computeDigest(key, PURPOSE + payload);

/**
 * A link's token: `<base64url JSON of the claims>.<base64url HMAC-SHA256 of it>` keyed by `key`. Everything the
 * link may open is inside the signed part; it holds no token of the GIS server.
 */
export function signAttachmentLink(key: Buffer, claims: AttachmentLinkClaims): string {
  const { service, layerId, objectId, attachmentId, contentType, name, expiresAtSeconds } = claims;
  const payload = Buffer.from(
    JSON.stringify({ s: service, l: layerId, o: objectId, a: attachmentId, t: contentType, n: name, e: expiresAtSeconds }),
  ).toString('base64url');
  return `${payload}.${macOf(key, payload).toString('base64url')}`;
}

const isWhole = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** The claims of a payload whose MAC held, or undefined when their shape is not a link's. */
function claimsOf(payload: string): AttachmentLinkClaims | undefined {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const { s, l, o, a, t, n, e } = parsed;
  if (typeof s !== 'string' || typeof t !== 'string' || typeof n !== 'string') return undefined;
  if (!isWhole(l) || !isWhole(o) || !isWhole(a) || !isWhole(e)) return undefined;
  return { service: s, layerId: l, objectId: o, attachmentId: a, contentType: t, name: n, expiresAtSeconds: e };
}

/**
 * The claims of `token` when its MAC is that of `key` (compared in constant time, as bytes of equal length) and it
 * has not expired at `nowMs`; else why not. A token is checked whole before anything in it is believed.
 */
export function verifyAttachmentLink(key: Buffer, token: string, nowMs: number): AttachmentLinkClaims | AttachmentLinkRefusal {
  const match = TOKEN.exec(token);
  if (match === null) return 'invalid';
  const [, payload, mac] = match as unknown as [string, string, string];
  const received = Buffer.from(mac, 'base64url');
  const expected = macOf(key, payload);
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) return 'invalid';
  const claims = claimsOf(payload);
  if (claims === undefined) return 'invalid';
  return claims.expiresAtSeconds * 1000 <= nowMs ? 'expired' : claims;
}
