import t, { type Test } from 'tap';
import { decodeSignature } from '../../src/signature/decode-signature.js';
import { computeDigest, sign } from '../../src/signature/sign.js';
import { verify } from '../../src/signature/verify.js';
import { fixture } from '../helpers/paths.js';

const KEY = 'geohook-test-key';

interface Vector {
  label: string;
  key: string;
  data: Buffer;
  base64: string;
  hex: string;
}

/**
 * Known answers computed outside geohook, over the exact bytes:
 * `openssl dgst -sha256 -hmac KEY -binary < FILE | base64` and `openssl dgst -sha256 -hmac KEY < FILE`.
 */
const vectors: Vector[] = [
  {
    label: 'enterprise-feature-created.json',
    key: KEY,
    data: fixture('enterprise-feature-created.json'),
    base64: 'Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk=',
    hex: '25ed5227403668874374c9d4e85e9dadba7d62b5e722995dd2dbe5f8aee24879',
  },
  {
    label: 'enterprise-gp-succeeded.json',
    key: KEY,
    data: fixture('enterprise-gp-succeeded.json'),
    base64: 'apzXnKmKmBfb2CURLtS4EEDHyMbuBuWrgFaSwxMimXE=',
    hex: '6a9cd79ca98a9817dbd825112ed4b81040c7c8c6ee06e5ab805692c313229971',
  },
  {
    label: 'invalid-utf8.json',
    key: KEY,
    data: fixture('invalid-utf8.json'),
    base64: 'gXFspkKNykxo7H71hW2iYcrFAL6NbKhG7qifZjTDknU=',
    hex: '81716ca6428dca4c68ec7ef5856da261cac500be8d6ca846eea89f6634c39275',
  },
  {
    label: 'agol-multi-event.json',
    key: KEY,
    data: fixture('agol-multi-event.json'),
    base64: 'GyIH1Dl5gnPqWH7rA1a1DA1wWAAkodZSZ/XheAZD2Ys=',
    hex: '1b2207d439798273ea587eeb0356b50c0d70580024a1d65267f5e1780643d98b',
  },
  {
    label: 'enterprise-gp-succeeded.json under a non-ASCII key',
    key: 'clé-secrète',
    data: fixture('enterprise-gp-succeeded.json'),
    base64: '8tCZ9r/Q3cYAs1T7yM3v4bS9CnrVQFUmqu49h510c+Q=',
    hex: 'f2d099f6bfd0ddc600b354fbc8cdefe1b4bd0a7ad5405526aaee3d879d7473e4',
  },
  {
    label: 'the 13 bytes challenge-123',
    key: KEY,
    data: Buffer.from('challenge-123', 'ascii'),
    base64: '1iJufcgmbmfSkyI+uPDQg7uFGBGo3fWYhpLnQlTpnNU=',
    hex: 'd6226e7dc8266e67d293223eb8f0d083bb851811a8ddf5988692e74254e99cd5',
  },
];

const toBase64Url = (base64: string): string => base64.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');

/** Asserts `verify` accepts `signature` for the vector's key and data. */
function accepts(t: Test, vector: Vector, signature: string): void {
  t.equal(verify([vector.key], vector.data, signature), true, `${vector.label}: ${JSON.stringify(signature)}`);
}

/** Asserts `verify` refuses `signature` for the vector's key and data. */
function refuses(t: Test, vector: Vector, signature: string, data: Buffer = vector.data): void {
  t.equal(verify([vector.key], data, signature), false, `${vector.label}: ${JSON.stringify(signature)}`);
}

/** The vector's digest with one bit flipped, as raw bytes. */
function flipOneBit(vector: Vector, byteIndex: number, mask: number): Buffer {
  const digest = Buffer.from(vector.hex, 'hex');
  digest[byteIndex] = digest[byteIndex]! ^ mask;
  return digest;
}

t.test('sign returns sha256= followed by the base64 HMAC-SHA256 of the exact bytes', async (t) => {
  for (const vector of vectors) {
    t.equal(sign(vector.key, vector.data), `sha256=${vector.base64}`, vector.label);
  }
});

t.test('computeDigest returns the 32 raw digest bytes', async (t) => {
  for (const vector of vectors) {
    const digest = computeDigest(vector.key, vector.data);
    t.equal(digest.length, 32, vector.label);
    t.equal(digest.toString('hex'), vector.hex, vector.label);
  }
});

t.test('a string key is used as its UTF-8 bytes', async (t) => {
  const data = fixture('enterprise-gp-succeeded.json');
  t.equal(sign(Buffer.from('clé-secrète', 'utf8'), data), 'sha256=8tCZ9r/Q3cYAs1T7yM3v4bS9CnrVQFUmqu49h510c+Q=');
  t.not(sign(Buffer.from('clé-secrète', 'latin1'), data), 'sha256=8tCZ9r/Q3cYAs1T7yM3v4bS9CnrVQFUmqu49h510c+Q=');
});

t.test('string data is signed as its UTF-8 bytes', async (t) => {
  t.equal(sign(KEY, 'challenge-123'), 'sha256=1iJufcgmbmfSkyI+uPDQg7uFGBGo3fWYhpLnQlTpnNU=');
});

t.test('sha256= followed by base64 is accepted', async (t) => {
  for (const vector of vectors) accepts(t, vector, `sha256=${vector.base64}`);
});

t.test('an upper-case SHA256= prefix is accepted', async (t) => {
  for (const vector of vectors) {
    accepts(t, vector, `SHA256=${vector.base64}`);
    accepts(t, vector, `SHA256=${vector.hex}`);
  }
});

t.test('bare base64 is accepted', async (t) => {
  for (const vector of vectors) accepts(t, vector, vector.base64);
});

t.test('base64url without padding is accepted with and without the sha256= prefix', async (t) => {
  t.equal(toBase64Url('Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk='), 'Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl-K7iSHk');
  for (const vector of vectors) {
    accepts(t, vector, toBase64Url(vector.base64));
    accepts(t, vector, `sha256=${toBase64Url(vector.base64)}`);
  }
});

t.test('hex digests are accepted in either case', async (t) => {
  for (const vector of vectors) {
    accepts(t, vector, vector.hex);
    accepts(t, vector, vector.hex.toUpperCase());
    accepts(t, vector, `sha256=${vector.hex}`);
    accepts(t, vector, `sha256=${vector.hex.toUpperCase()}`);
  }
});

t.test('a URL-encoded header value is accepted', async (t) => {
  t.equal(
    encodeURIComponent('sha256=Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk='),
    'sha256%3DJe1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl%2BK7iSHk%3D',
  );
  for (const vector of vectors) {
    accepts(t, vector, encodeURIComponent(`sha256=${vector.base64}`));
    accepts(t, vector, encodeURIComponent(`sha256=${vector.hex}`));
  }
});

t.test('a base64 value whose + became a space is accepted', async (t) => {
  const withPlus = vectors.filter((vector) => vector.base64.includes('+'));
  t.equal(withPlus.length, 3, 'three vectors carry a +');
  for (const vector of withPlus) {
    accepts(t, vector, `sha256=${vector.base64.replaceAll('+', ' ')}`);
    accepts(t, vector, vector.base64.replaceAll('+', ' '));
  }
});

t.test('a digest with one bit flipped is refused', async (t) => {
  for (const vector of vectors) {
    refuses(t, vector, `sha256=${flipOneBit(vector, 0, 0x01).toString('base64')}`);
    refuses(t, vector, flipOneBit(vector, 31, 0x80).toString('hex'));
    refuses(t, vector, `sha256=${flipOneBit(vector, 16, 0x10).toString('base64url')}`);
  }
});

t.test('a truncated digest is refused', async (t) => {
  for (const vector of vectors) {
    refuses(t, vector, `sha256=${vector.base64.slice(0, -2)}`);
    refuses(t, vector, vector.hex.slice(0, 62));
    refuses(t, vector, `sha256=${Buffer.from(vector.hex, 'hex').subarray(0, 31).toString('base64')}`);
  }
});

t.test('the right digest under another key is refused', async (t) => {
  for (const vector of vectors) {
    t.equal(verify(['another-key'], vector.data, `sha256=${vector.base64}`), false, vector.label);
  }
});

t.test('an empty signature is refused', async (t) => {
  for (const vector of vectors) refuses(t, vector, '');
  t.equal(verify([KEY], fixture('enterprise-feature-created.json'), 'sha256='), false);
});

t.test('garbage is refused', async (t) => {
  const vector = vectors[0]!;
  for (const garbage of [
    'garbage',
    'sha256=garbage',
    'sha1=Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk=',
    `sha256=${'!'.repeat(43)}=`,
    'z'.repeat(64),
    '%E0%A4%A',
    `sha256=${vector.base64}${vector.base64}`,
  ]) {
    refuses(t, vector, garbage);
  }
});

t.test('the digest of a body one byte different is refused', async (t) => {
  for (const vector of vectors) {
    const altered = Buffer.from(vector.data);
    altered[altered.length - 1] = altered[altered.length - 1]! ^ 0x01;
    t.equal(altered.length, vector.data.length);
    refuses(t, vector, `sha256=${vector.base64}`, altered);
    t.equal(verify([vector.key], vector.data, sign(vector.key, altered)), false, `${vector.label}: reverse`);
  }
});

t.test('no keys verify nothing', async (t) => {
  const vector = vectors[0]!;
  t.equal(verify([], vector.data, `sha256=${vector.base64}`), false);
});

t.test('either key of a rotation pair verifies', async (t) => {
  const body = fixture('enterprise-feature-created.json');
  t.equal(verify(['old', 'new'], body, sign('old', body)), true, 'signed with the old key');
  t.equal(verify(['old', 'new'], body, sign('new', body)), true, 'signed with the new key');
  t.equal(verify(['old', 'new'], body, sign('retired', body)), false, 'signed with neither');
  t.equal(verify(['other', KEY], body, 'sha256=Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk='), true, 'second key');
});

t.test('any one of several data candidates verifies', async (t) => {
  const feature = fixture('enterprise-feature-created.json');
  const gp = fixture('enterprise-gp-succeeded.json');
  const challenge = Buffer.from('challenge-123');
  t.equal(verify([KEY], [feature, gp], 'sha256=apzXnKmKmBfb2CURLtS4EEDHyMbuBuWrgFaSwxMimXE='), true, 'second of two');
  t.equal(verify([KEY], [challenge, gp, feature], 'sha256=Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk='), true, 'last of three');
  t.equal(verify([KEY], [feature, gp], 'sha256=1iJufcgmbmfSkyI+uPDQg7uFGBGo3fWYhpLnQlTpnNU='), false, 'none matches');
  t.equal(verify([KEY], [], 'sha256=Je1SJ0A2aIdDdMnU6F6drbp9YrXnIpld0tvl+K7iSHk='), false, 'no candidates');
  t.equal(
    verify(['old', 'clé-secrète'], [feature, gp], 'sha256=8tCZ9r/Q3cYAs1T7yM3v4bS9CnrVQFUmqu49h510c+Q='),
    true,
    'second key with second candidate',
  );
});

t.test('a body that is not valid UTF-8 verifies as bytes, not as re-encoded text', async (t) => {
  const body = fixture('invalid-utf8.json');
  const signature = 'sha256=gXFspkKNykxo7H71hW2iYcrFAL6NbKhG7qifZjTDknU=';
  t.equal(verify([KEY], body, signature), true, 'the exact bytes verify');

  const reencoded = Buffer.from(body.toString('utf8'), 'utf8');
  t.equal(body.length, 134);
  t.equal(reencoded.length, 142, 'four invalid bytes each became the 3-byte U+FFFD');
  t.equal(reencoded.equals(body), false);
  t.not(sign(KEY, reencoded), signature);
  t.equal(verify([KEY], reencoded, signature), false, 'the re-encoded text does not verify');
});

t.test('decodeSignature returns the 32 digest bytes of every accepted form', async (t) => {
  const vector = vectors[0]!;
  for (const form of [
    `sha256=${vector.base64}`,
    `SHA256=${vector.base64}`,
    vector.base64,
    toBase64Url(vector.base64),
    vector.hex,
    vector.hex.toUpperCase(),
    `sha256=${vector.hex}`,
    encodeURIComponent(`sha256=${vector.base64}`),
    vector.base64.replaceAll('+', ' '),
    `  sha256=${vector.base64}  `,
  ]) {
    const digest = decodeSignature(form);
    t.equal(digest?.length, 32, JSON.stringify(form));
    t.equal(digest?.toString('hex'), vector.hex, JSON.stringify(form));
  }
});

t.test('decodeSignature returns undefined for digests of the wrong length', async (t) => {
  const bytes31 = Buffer.alloc(31, 0xab);
  const bytes33 = Buffer.alloc(33, 0xab);
  const cases = {
    'hex of 31 bytes': bytes31.toString('hex'),
    'hex of 33 bytes': bytes33.toString('hex'),
    'base64 of 31 bytes': bytes31.toString('base64'),
    'base64 of 33 bytes': bytes33.toString('base64'),
    'sha256= base64 of 33 bytes': `sha256=${bytes33.toString('base64')}`,
    'base64url of 33 bytes': bytes33.toString('base64url'),
    empty: '',
  };
  t.equal(cases['hex of 31 bytes'].length, 62);
  t.equal(cases['base64 of 33 bytes'].length, 44);
  for (const [name, value] of Object.entries(cases)) {
    t.equal(decodeSignature(value), undefined, name);
  }
});
