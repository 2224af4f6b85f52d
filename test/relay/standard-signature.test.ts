import t from 'tap';
import { parseWebhookSecret } from '../../src/config/relay-secrets.js';
import { GeohookError } from '../../src/errors.js';
import { standardSignature } from '../../src/relay/standard-signature.js';

// The example of Svix's "verifying payloads manually" page: a signature any Standard Webhooks verifier accepts.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestampSeconds: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof GeohookError ? err.code : 'not a GeohookError';
  }
  return undefined;
};

t.test('a signature matches the known answer of the Standard Webhooks example', async (t) => {
  const { id, timestampSeconds, body } = VECTOR;
  t.equal(standardSignature([parseWebhookSecret(VECTOR.secret)], { id, timestampSeconds, body }), VECTOR.signature);
});

t.test('several secrets give one v1 signature each, in order, separated by a space', async (t) => {
  const { id, timestampSeconds, body } = VECTOR;
  const other = parseWebhookSecret(`whsec_${Buffer.alloc(32, 1).toString('base64')}`);
  const header = standardSignature([other, parseWebhookSecret(VECTOR.secret)], { id, timestampSeconds, body });
  const parts = header.split(' ');
  t.equal(parts.length, 2);
  t.match(parts[0], /^v1,[A-Za-z0-9+/]{43}=$/);
  t.not(parts[0], VECTOR.signature);
  t.equal(parts[1], VECTOR.signature);
});

t.test('the id, the timestamp and every byte of the body are signed', async (t) => {
  const keys = [parseWebhookSecret(VECTOR.secret)];
  const { id, timestampSeconds, body } = VECTOR;
  t.not(standardSignature(keys, { id: `${id}x`, timestampSeconds, body }), VECTOR.signature);
  t.not(standardSignature(keys, { id, timestampSeconds: timestampSeconds + 1, body }), VECTOR.signature);
  t.not(standardSignature(keys, { id, timestampSeconds, body: body.replace(' ', '') }), VECTOR.signature);
});

t.test('a secret without the whsec_ prefix, with bad base64, or of a key too short or too long is a configuration error', async (t) => {
  const good = Buffer.alloc(32, 9).toString('base64');
  t.equal(
    codeOf(() => parseWebhookSecret(good)),
    'GEOHOOK_ERR_CONFIG',
    'no prefix',
  );
  t.equal(
    codeOf(() => parseWebhookSecret('whsec_')),
    'GEOHOOK_ERR_CONFIG',
    'nothing after the prefix',
  );
  t.equal(
    codeOf(() => parseWebhookSecret(`whsec_${good.slice(0, -1)}`)),
    'GEOHOOK_ERR_CONFIG',
    'unpadded',
  );
  t.equal(
    codeOf(() => parseWebhookSecret(`whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`)),
    'GEOHOOK_ERR_CONFIG',
    'base64url',
  );
  t.equal(
    codeOf(() => parseWebhookSecret(`whsec_${Buffer.alloc(16).toString('base64')}`)),
    'GEOHOOK_ERR_CONFIG',
    '16 bytes',
  );
  t.equal(
    codeOf(() => parseWebhookSecret(`whsec_${Buffer.alloc(65).toString('base64')}`)),
    'GEOHOOK_ERR_CONFIG',
    '65 bytes',
  );
  t.equal(
    codeOf(() => parseWebhookSecret(`whsec_${good}`)),
    undefined,
    'a 32-byte key',
  );
  t.equal(parseWebhookSecret(`whsec_${good}`).length, 32);
});

t.test('the error message names the setting and never quotes the secret', async (t) => {
  const secret = `whsec_${'A'.repeat(20)}`;
  try {
    parseWebhookSecret(secret, 'relays[2].secret');
    t.fail('accepted a 15-byte key');
  } catch (err) {
    t.match((err as Error).message, /^relays\[2\]\.secret /);
    t.notMatch((err as Error).message, 'AAAA');
  }
});

t.test('no key, an id holding a dot or a timestamp that is not whole seconds is refused', async (t) => {
  const keys = [parseWebhookSecret(VECTOR.secret)];
  t.equal(
    codeOf(() => standardSignature([], { id: 'a', timestampSeconds: 1, body: '' })),
    'GEOHOOK_ERR_CONFIG',
  );
  t.equal(
    codeOf(() => standardSignature(keys, { id: 'a.b', timestampSeconds: 1, body: '' })),
    'GEOHOOK_ERR_INTERNAL',
  );
  t.equal(
    codeOf(() => standardSignature(keys, { id: 'a', timestampSeconds: 1.5, body: '' })),
    'GEOHOOK_ERR_INTERNAL',
  );
});
