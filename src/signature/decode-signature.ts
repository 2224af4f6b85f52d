const DIGEST_BYTES = 32;
const HEX_DIGEST = /^[0-9a-f]{64}$/i;
const BASE64_DIGEST = /^[A-Za-z0-9+/_-]{43}=?$/;

function percentDecode(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Turns a received signature value into the 32 digest bytes it carries, or `undefined` when it is not a
 * SHA-256 digest in any accepted form: `sha256=` prefix or none; base64, base64url or hex in either case;
 * the whole value possibly URL-encoded. A `+` turned into a space by form decoding is put back.
 */
export function decodeSignature(received: string): Buffer | undefined {
  let value = percentDecode(received.trim());
  if (value.slice(0, 7).toLowerCase() === 'sha256=') value = value.slice(7);
  if (HEX_DIGEST.test(value)) return Buffer.from(value, 'hex');
  value = value.replaceAll(' ', '+');
  if (!BASE64_DIGEST.test(value)) return undefined;
  const digest = Buffer.from(value, 'base64');
  return digest.length === DIGEST_BYTES ? digest : undefined;
}
