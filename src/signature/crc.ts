/**
 * ArcGIS Online's challenge (`GET <hookUrl>?crc_token=T`) is answered with `sha256=base64(HMAC(key, T))`: the
 * very signature a delivery whose signed bytes are T would carry. The two uses are kept apart by what is
 * signed: a challenge is answered only for a token made of {@link CRC_TOKEN_ALPHABET}, and no delivery is
 * accepted whose signed bytes are made only of it (every real delivery holds `{`, `[`, `"`, `%` or `&`, none
 * of which is in it). So no challenge answer ever verifies as a delivery (docs/receiver.md#the-challenge).
 */

/** The characters a challenge token may hold: base64, base64url, hex and the URL-safe punctuation. */
export const CRC_TOKEN_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-';

/** Longest challenge token answered; the GIS server's are short random strings. */
export const MAX_CRC_TOKEN_LENGTH = 256;

const inAlphabet = new Uint8Array(256);
for (const character of CRC_TOKEN_ALPHABET) inAlphabet[character.charCodeAt(0)] = 1;

/** True when `token` may be answered: 1 to {@link MAX_CRC_TOKEN_LENGTH} characters of {@link CRC_TOKEN_ALPHABET}. */
export function isCrcToken(token: string): boolean {
  if (token.length === 0 || token.length > MAX_CRC_TOKEN_LENGTH) return false;
  for (let index = 0; index < token.length; index += 1) {
    const code = token.charCodeAt(index);
    if (code > 0xff || inAlphabet[code] === 0) return false;
  }
  return true;
}

/**
 * True when `bytes` could be a challenge token's: not empty, and every byte in {@link CRC_TOKEN_ALPHABET}
 * (whatever the length). Such bytes are never accepted as a signed delivery.
 */
export function couldBeCrcToken(bytes: Buffer): boolean {
  if (bytes.length === 0) return false;
  for (let index = 0; index < bytes.length; index += 1) if (inAlphabet[bytes[index]!] === 0) return false;
  return true;
}
