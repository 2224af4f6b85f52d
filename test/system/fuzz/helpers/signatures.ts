import { createHash, createHmac } from 'node:crypto';

/**
 * A model of signature headers for the fuzz tests: how a value was made (which key, which bytes, which digest,
 * which spelling) and what the receiver must do with it, judged from how it was made, never by decoding it
 * the way src/signature does.
 *
 * - `accept`: the right HMAC-SHA256 in a spelling docs/receiver.md#signatures lists (base64, base64url, hex either case, each
 *   with or without `sha256=`, the whole value URL-encoded or not).
 * - `reject`: made without the right digest (another key or body, another hash, a changed or cut digest, random
 *   text) or with digest bits lost (a character deleted, changed or cut off): a forgery.
 * - `either`: the right digest, every bit of it, in a spelling the docs do not list (`SHA256=`, spaces, a
 *   base64 without its `=`, `-` for `+`, double URL-encoding…): accepting it forges nothing, refusing it is fine.
 */
export type Verdict = 'accept' | 'reject' | 'either';

export interface SignatureValue {
  value: string;
  verdict: Verdict;
}

export type Alphabet = 'base64' | 'base64url' | 'hex' | 'HEX';
export const ALPHABETS: readonly Alphabet[] = ['base64', 'base64url', 'hex', 'HEX'];

/** Changes to the encoded digest, before any prefix or URL-encoding. */
export type Noise =
  | { kind: 'none' | 'upper' | 'lower' | 'whitespace' | 'twice' | 'listed' | 'plusToSpace' }
  | { kind: 'swapCase' | 'delete'; at: number }
  | { kind: 'replace' | 'insert'; at: number; char: string }
  | { kind: 'truncate'; count: number }
  | { kind: 'append'; text: string };

export type KeyTweak = 'swapCase' | 'trailingSpace' | 'trailingNewline' | 'dropLast' | 'appendX' | 'latin1' | 'utf16le' | 'hexOfKey';
export type DataTweak = 'same' | 'flipBit' | 'dropLast' | 'appendNewline' | 'empty' | 'doubled' | 'reserialised' | 'crlf';
type DigestTweak =
  | { kind: 'none' | 'zero' | 'random' }
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'truncate'; length: number }
  | { kind: 'extend'; extra: number };

/** How a signature was made from the delivery's body and the hook's keys. */
export interface SignatureRecipe {
  signer: { kind: 'hook'; index: number } | { kind: 'other'; key: string } | { kind: 'near'; index: number; tweak: KeyTweak };
  data: { tweak: DataTweak; at: number };
  algorithm: 'sha256' | 'sha1' | 'sha512' | 'md5' | 'plain-sha256';
  digest: DigestTweak;
  alphabet: Alphabet;
  noise: Noise;
  prefix: string;
  url: 'none' | 'whole' | 'double' | 'partial' | 'lowerEscapes';
}

const NO_NOISE: Noise = { kind: 'none' };
export const CONTRACT_PREFIXES: readonly string[] = ['', 'sha256='];
export const OTHER_PREFIXES = [
  'SHA256=',
  'Sha256=',
  'sha256:',
  'sha256 =',
  'sha1=',
  'sha512=',
  'sha256=sha256=',
  ' sha256=',
  'hmac-sha256=',
  'v1,',
];
const CONTRACT_URL = new Set(['none', 'whole']);

const B64_VALUE = new Map<string, number>([...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c, i) => [c, i]));
B64_VALUE.set('-', 62).set('_', 63);

export const hmac = (key: string | Buffer, data: Uint8Array | string): Buffer => createHmac('sha256', key).update(data).digest();

/**
 * Bytes a `crc_token` challenge may be answered for (docs/receiver.md#the-challenge): the receiver never accepts
 * a signature over them, or the challenge would sign deliveries.
 */
export const challengeShaped = (bytes: Uint8Array): boolean =>
  bytes.length > 0 && /^[A-Za-z0-9._~+/=-]+$/.test(Buffer.from(bytes).toString('latin1'));

/** The digest in one of the four accepted alphabets, without prefix. */
export function encodeBare(bytes: Buffer, alphabet: Alphabet): string {
  return alphabet === 'HEX' ? bytes.toString('hex').toUpperCase() : bytes.toString(alphabet);
}

/** Spelling `index` (0–15) of the 16 docs/receiver.md#signatures accepts: 4 alphabets × prefix or not × URL-encoded or not. */
export function contractSpelling(bytes: Buffer, index: number): string {
  const value = CONTRACT_PREFIXES[(index >> 2) & 1]! + encodeBare(bytes, ALPHABETS[index & 3]!);
  return index & 8 ? encodeURIComponent(value) : value;
}

export function applyNoise(text: string, noise: Noise): string {
  if (text.length === 0) return noise.kind === 'append' ? noise.text : text;
  const at = 'at' in noise ? noise.at % text.length : 0;
  switch (noise.kind) {
    case 'none':
      return text;
    case 'upper':
      return text.toUpperCase();
    case 'lower':
      return text.toLowerCase();
    case 'whitespace':
      return ` \t${text} `;
    case 'twice':
      return text + text;
    case 'listed':
      return `${text}, ${text}`;
    case 'plusToSpace':
      return text.replaceAll('+', ' ');
    case 'swapCase': {
      const c = text[at]!;
      return text.slice(0, at) + (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()) + text.slice(at + 1);
    }
    case 'delete':
      return text.slice(0, at) + text.slice(at + 1);
    case 'replace':
      return text.slice(0, at) + noise.char + text.slice(at + 1);
    case 'insert':
      return text.slice(0, at) + noise.char + text.slice(at);
    case 'truncate':
      return text.slice(0, Math.max(1, text.length - noise.count));
    case 'append':
      return text + noise.text;
  }
}

/**
 * What `noise` leaves of a right digest spelled `bare`: all its bits in a contract spelling (`accept`), all of
 * them otherwise (`either`), or not all of them (`reject`). In base64, characters 0–41 carry 6 bits of the
 * digest each, character 42 the last 4 (its 2 low bits are padding), character 43 is `=`.
 */
function noiseVerdict(bare: string, alphabet: Alphabet, noise: Noise): Verdict {
  const hex = alphabet === 'hex' || alphabet === 'HEX';
  if (applyNoise(bare, noise) === bare) return 'accept';
  const at = 'at' in noise ? noise.at % bare.length : 0;
  switch (noise.kind) {
    case 'upper':
    case 'lower':
      return hex ? 'accept' : 'reject';
    case 'swapCase':
      return hex ? 'either' : 'reject';
    case 'delete':
      return bare[at] === '=' ? 'either' : 'reject';
    case 'truncate':
      return alphabet === 'base64' && noise.count === 1 ? 'either' : 'reject';
    case 'replace': {
      const was = bare[at]!;
      if (hex) return /^[0-9a-f]$/i.test(noise.char) && noise.char.toLowerCase() === was.toLowerCase() ? 'either' : 'reject';
      if (was === '=') return 'either';
      const before = B64_VALUE.get(was)!;
      // The receiver reads a space as the `+` form decoding turned into one (value 62, as `-` in base64url).
      const after = B64_VALUE.get(noise.char === ' ' ? '+' : noise.char);
      if (after === undefined) return 'reject';
      return (at < 42 ? after === before : after >> 2 === before >> 2) ? 'either' : 'reject';
    }
    default:
      return 'either';
  }
}

function tweakKey(key: string, tweak: KeyTweak): Buffer {
  switch (tweak) {
    case 'swapCase':
      return Buffer.from(key[0] === key[0]!.toUpperCase() ? key[0]!.toLowerCase() + key.slice(1) : key[0]!.toUpperCase() + key.slice(1));
    case 'trailingSpace':
      return Buffer.from(`${key} `);
    case 'trailingNewline':
      return Buffer.from(`${key}\n`);
    case 'dropLast':
      return Buffer.from(key.slice(0, -1));
    case 'appendX':
      return Buffer.from(`${key}x`);
    case 'latin1':
      return Buffer.from(key, 'latin1');
    case 'utf16le':
      return Buffer.from(key, 'utf16le');
    case 'hexOfKey':
      return Buffer.from(Buffer.from(key).toString('hex'));
  }
}

function tweakData(body: Buffer, { tweak, at }: SignatureRecipe['data']): Buffer {
  switch (tweak) {
    case 'same':
      return body;
    case 'flipBit': {
      if (body.length === 0) return Buffer.from([1 << (at % 8)]);
      const copy = Buffer.from(body);
      copy[at % copy.length]! ^= 1 << (at % 8);
      return copy;
    }
    case 'dropLast':
      return body.subarray(0, -1);
    case 'appendNewline':
      return Buffer.concat([body, Buffer.from('\n')]);
    case 'empty':
      return Buffer.alloc(0);
    case 'doubled':
      return Buffer.concat([body, body]);
    case 'reserialised':
      try {
        return Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8'))));
      } catch {
        return Buffer.concat([body, Buffer.from(' ')]);
      }
    case 'crlf':
      return Buffer.from(body.toString('latin1').replaceAll('\n', '\r\n').replaceAll('}', '}\r\n'), 'latin1');
  }
}

function tweakDigest(digest: Buffer, tweak: DigestTweak): Buffer {
  switch (tweak.kind) {
    case 'none':
      return digest;
    case 'zero':
      return Buffer.alloc(32);
    case 'random':
      return createHash('sha256').update(digest).update('random').digest();
    case 'flip': {
      const copy = Buffer.from(digest);
      copy[tweak.at % copy.length]! ^= 1 << tweak.bit;
      return copy;
    }
    case 'truncate':
      return digest.subarray(0, tweak.length);
    case 'extend':
      return Buffer.concat([digest, Buffer.alloc(tweak.extra, 0x41)]);
  }
}

function urlWrap(value: string, url: SignatureRecipe['url']): string {
  switch (url) {
    case 'none':
      return value;
    case 'whole':
      return encodeURIComponent(value);
    case 'double':
      return encodeURIComponent(encodeURIComponent(value));
    case 'partial':
      return value.replaceAll('=', '%3D');
    case 'lowerEscapes':
      return encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
  }
}

/** True when `digest` is the HMAC-SHA256 of one of `candidates` under one of `keys` (the ground truth). */
export function isRightDigest(keys: readonly string[], candidates: readonly Uint8Array[], digest: Buffer): boolean {
  return digest.length === 32 && keys.some((key) => candidates.some((data) => hmac(key, data).equals(digest)));
}

/**
 * What `noise` makes of a wrong digest spelled `bare`: a replaced character can undo a flipped bit or cut an
 * extended digest back to its 32 bytes. Spelled exactly as the right signature, it is one (`accept`); decoding
 * to it in another spelling (padding bits set), the receiver may read it either way (`either`).
 */
function noiseRepairs(bare: string, alphabet: Alphabet, noise: Noise, keys: readonly string[], signed: readonly Buffer[]): Verdict {
  if (noise.kind !== 'replace') return 'reject';
  const text = applyNoise(bare, noise);
  const bytes = Buffer.from(text, alphabet === 'HEX' ? 'hex' : alphabet);
  if (!isRightDigest(keys, signed, bytes)) return 'reject';
  return encodeBare(bytes, alphabet) === text ? 'accept' : 'either';
}

/** The signature `recipe` makes for `signed` (the bytes a right signature covers) and its verdict. */
export function makeSignature(recipe: SignatureRecipe, keys: readonly string[], signed: readonly Buffer[]): SignatureValue {
  const { signer } = recipe;
  const hookKey = signer.kind === 'other' ? undefined : keys[signer.index % Math.max(1, keys.length)];
  const key =
    signer.kind === 'other' || hookKey === undefined
      ? Buffer.from(signer.kind === 'other' ? signer.key : 'no-hook-key')
      : signer.kind === 'near'
        ? tweakKey(hookKey, signer.tweak)
        : Buffer.from(hookKey);
  const data = tweakData(signed[0]!, recipe.data);
  const made =
    recipe.algorithm === 'plain-sha256'
      ? createHash('sha256').update(data).digest()
      : createHmac(recipe.algorithm, key).update(data).digest();
  const digest = tweakDigest(made, recipe.digest);
  const bare = encodeBare(digest, recipe.alphabet);
  // Cutting characters off an extended digest could give the right one back: no cuts on those.
  const noise =
    recipe.digest.kind === 'extend' && (recipe.noise.kind === 'truncate' || recipe.noise.kind === 'delete') ? NO_NOISE : recipe.noise;
  // What the receiver may verify: a challenge-shaped candidate never is.
  const signable = signed.filter((bytes) => !challengeShaped(bytes));
  let verdict: Verdict = isRightDigest(keys, signable, digest)
    ? noiseVerdict(bare, recipe.alphabet, noise)
    : noiseRepairs(bare, recipe.alphabet, noise, keys, signable);
  if (verdict === 'accept' && (!CONTRACT_PREFIXES.includes(recipe.prefix) || !CONTRACT_URL.has(recipe.url))) verdict = 'either';
  return { value: urlWrap(recipe.prefix + applyNoise(bare, noise), recipe.url), verdict };
}
