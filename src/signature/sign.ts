import { createHmac } from 'node:crypto';

/** HMAC-SHA256 of `data` with `key` (a string key is used as its UTF-8 bytes). */
export function computeDigest(key: string | Buffer, data: Buffer | string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

/** The header value the GIS server sends: `sha256=` followed by the base64 digest. */
export function sign(key: string | Buffer, data: Buffer | string): string {
  return `sha256=${computeDigest(key, data).toString('base64')}`;
}
