import { createHash, timingSafeEqual } from 'node:crypto';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * True when `a` equals `b`. Their SHA-256 digests (always 32 bytes) are compared in constant time, so
 * neither the position of the first difference nor the length of the secret shows in the timing.
 */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/** The token of an `Authorization: Bearer <token>` header; `undefined` for any other header or none. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1];
}
