import { timingSafeEqual } from 'node:crypto';
import { decodeSignature } from './decode-signature.js';
import { computeDigest } from './sign.js';

/**
 * True when `signature` is the HMAC-SHA256 of any of `data` under any of `keys`. The digests are compared
 * as bytes in constant time; an undecodable signature is simply false.
 */
export function verify(keys: readonly string[], data: Buffer | readonly Buffer[], signature: string): boolean {
  const received = decodeSignature(signature);
  if (received === undefined) return false;
  const candidates = Buffer.isBuffer(data) ? [data] : data;
  for (const key of keys) {
    for (const candidate of candidates) {
      if (timingSafeEqual(computeDigest(key, candidate), received)) return true;
    }
  }
  return false;
}
