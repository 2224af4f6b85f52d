import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import t from 'tap';
import type { HookConfig } from '../../src/config/load-config.js';
import { authenticate } from '../../src/receiver/authenticate.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

/**
 * Property-based tests of the receiver's front door: no forged delivery gets in, every legitimate
 * encoding of a right signature does, and no input makes the receiver answer 5xx (503 aside) or crash.
 * fast-check prints the seed of a failing run, so that it can be replayed.
 */
const IN_PROCESS_RUNS = 100_000;
const HTTP_RUNS = 2_000;
let cases = 0;

const policy = { requireSignature: true, signatureHeaders: ['x-service', 'x-esrihook-signature'] };
const hookOf = (secrets: string[]): HookConfig => ({ name: 'default', secrets, services: [], changeTypes: ['*'] });
const digest = (key: string, body: Uint8Array): Buffer => createHmac('sha256', key).update(body).digest();

/** Every encoding of a digest that CONTRACT §3 accepts. */
const legitEncodings = (bytes: Buffer): string[] => {
  const bare = [bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex'), bytes.toString('hex').toUpperCase()];
  const prefixed = bare.flatMap((value) => [value, `sha256=${value}`]);
  return [...prefixed, ...prefixed.map(encodeURIComponent)];
};

/** Ways to forge: another key, a flipped bit, a truncation, another hash, random text, empty, huge. */
const forgery = (key: string, body: Uint8Array): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ minLength: 1, maxLength: 20 }).filter((other) => other !== key).chain((other) => fc.constantFrom(...legitEncodings(digest(other, body)))),
    fc.tuple(fc.nat({ max: 255 }), fc.nat({ max: 7 })).chain(([at, bit]) => {
      const flipped = Buffer.from(digest(key, body));
      flipped[at % flipped.length]! ^= 1 << bit;
      return fc.constantFrom(...legitEncodings(flipped));
    }),
    fc.nat({ max: 31 }).chain((length) => fc.constantFrom(...legitEncodings(digest(key, body).subarray(0, length)))),
    fc.constant(`sha256=${createHmac('sha1', key).update(body).digest('base64')}`),
    fc.string({ maxLength: 100 }),
    fc.constant(''),
    fc.constant(`sha256=${'A'.repeat(100_000)}`),
  );

t.test(`${IN_PROCESS_RUNS.toLocaleString('en')} signature mutations: only a right signature, in any accepted encoding, verifies`, async (t) => {
  const delivery = fc
    .tuple(fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)), fc.string({ minLength: 1, maxLength: 32 }), fc.integer({ min: 0, max: 3 }))
    .chain(([raw, key, variant]) =>
      fc
        .oneof(
          fc.constantFrom(...legitEncodings(digest(key, raw))).map((value) => ({ value, legit: true })),
          forgery(key, raw).map((value) => ({ value, legit: false })),
        )
        .map((signature) => ({ raw, key, variant, ...signature })),
    );
  fc.assert(
    fc.property(delivery, ({ raw, key, variant, value, legit }) => {
      cases += 1;
      const keys = variant % 2 === 0 ? [key] : ['a-second-key', key];
      const header = variant < 2 ? 'x-service' : 'x-esrihook-signature';
      const result = authenticate(hookOf(keys), policy, { [header]: value }, raw);
      return result.ok === legit && (!result.ok || result.verified);
    }),
    { numRuns: IN_PROCESS_RUNS },
  );
  t.pass('no forged signature verified, every legitimate encoding did');
});

t.test(`${HTTP_RUNS.toLocaleString('en')} random deliveries over HTTP: no 5xx but 503, no forged 2xx`, async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis, { MAX_BODY_BYTES: '65536' });
  const before = process.memoryUsage().heapUsed;
  const contentTypes = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', '', 'application/xml'];
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(fc.json(), fc.string({ maxLength: 2000 }), fc.uint8Array({ maxLength: 70_000 }).map((bytes) => Buffer.from(bytes).toString('latin1'))),
      fc.constantFrom(...contentTypes),
      fc.boolean(),
      fc.dictionary(fc.constantFrom('x-forwarded-for', 'x-esrihook-signature', 'accept', 'x-random'), fc.string({ maxLength: 50 }), { maxKeys: 3 }),
      async (text, contentType, signed, extra) => {
        cases += 1;
        const body = Buffer.from(text, 'latin1');
        const headers: Record<string, string> = { ...extra, ...(contentType === '' ? {} : { 'content-type': contentType }) };
        if (signed) headers['x-service'] = `sha256=${digest(TEST_KEY, body).toString('base64')}`;
        else delete headers['x-esrihook-signature'];
        const response = await receiver.app.inject({ method: 'POST', url: '/webhooks/default', headers, payload: body });
        const status = response.statusCode;
        if (status >= 500 && status !== 503) throw new Error(`${status}: ${response.body}`);
        if (status >= 200 && status < 300 && !signed) throw new Error(`unsigned delivery accepted: ${status}`);
        return [202, 400, 401, 413, 415, 503].includes(status);
      },
    ),
    { numRuns: HTTP_RUNS },
  );
  const grownMb = (process.memoryUsage().heapUsed - before) / 1048576;
  t.ok(grownMb < 100, `heap grew ${grownMb.toFixed(1)} MiB over ${HTTP_RUNS} deliveries`);
  t.ok(cases >= IN_PROCESS_RUNS + HTTP_RUNS, `${cases.toLocaleString('en')} cases in all`);
});
