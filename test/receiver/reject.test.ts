import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { fixture } from '../helpers/paths.js';
import { countJobs, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const body = fixture('enterprise-feature-created.json');

interface Case {
  name: string;
  env?: Record<string, string>;
  send: (post: Awaited<ReturnType<typeof startReceiver>>['post']) => Promise<Response>;
  status: number;
  code: string;
  /** What the message says; any message when unset. */
  message?: RegExp;
}

const cases: Case[] = [
  {
    name: 'a wrong signature is refused with 401 GEOHOOK_ERR_BAD_SIGNATURE',
    send: (post) => post(body, { 'x-service': sign('another-key', body) }),
    status: 401,
    code: 'GEOHOOK_ERR_BAD_SIGNATURE',
  },
  {
    name: 'a signature that is not a digest is refused with 401 GEOHOOK_ERR_BAD_SIGNATURE',
    send: (post) => post(body, { 'x-service': 'sha256=not-a-digest' }),
    status: 401,
    code: 'GEOHOOK_ERR_BAD_SIGNATURE',
  },
  {
    name: 'a missing signature is refused with 401 GEOHOOK_ERR_MISSING_SIGNATURE',
    send: (post) => post(body),
    status: 401,
    code: 'GEOHOOK_ERR_MISSING_SIGNATURE',
  },
  {
    name: 'an unsigned delivery to a hook without keys is refused while REQUIRE_SIGNATURE is true',
    env: { HOOK_SECRETS: '' },
    send: (post) => post(body),
    status: 401,
    code: 'GEOHOOK_ERR_UNSIGNED_NOT_ALLOWED',
  },
  {
    name: 'a signed body that is not JSON is refused with 400 GEOHOOK_ERR_BAD_PAYLOAD',
    send: (post) => post('{"serviceType":', { 'x-service': sign(TEST_KEY, '{"serviceType":') }),
    status: 400,
    code: 'GEOHOOK_ERR_BAD_PAYLOAD',
  },
  {
    name: 'a signed empty JSON body is refused with 400 GEOHOOK_ERR_BAD_PAYLOAD',
    send: (post) => post('', { 'x-service': sign(TEST_KEY, '') }),
    status: 400,
    code: 'GEOHOOK_ERR_BAD_PAYLOAD',
  },
  {
    name: 'an unsigned body that is not JSON is refused with 401, not 400: the signature is judged first',
    send: (post) => post('{"serviceType":'),
    status: 401,
    code: 'GEOHOOK_ERR_MISSING_SIGNATURE',
  },
  {
    name: 'a forged body that is not JSON is refused with 401 GEOHOOK_ERR_BAD_SIGNATURE',
    send: (post) => post('not json', { 'x-service': sign('another-key', 'not json') }),
    status: 401,
    code: 'GEOHOOK_ERR_BAD_SIGNATURE',
  },
  {
    name: 'an unknown hook is refused with 404 GEOHOOK_ERR_UNKNOWN_HOOK',
    send: (post) => post(body, { 'x-service': sign(TEST_KEY, body) }, 'nope'),
    status: 404,
    code: 'GEOHOOK_ERR_UNKNOWN_HOOK',
  },
  {
    name: 'a body over MAX_BODY_BYTES is refused with 413 GEOHOOK_ERR_BODY_TOO_LARGE',
    env: { MAX_BODY_BYTES: '1024' },
    send: (post) => {
      const big = Buffer.from(JSON.stringify({ pad: 'x'.repeat(2000) }));
      return post(big, { 'x-service': sign(TEST_KEY, big) });
    },
    status: 413,
    code: 'GEOHOOK_ERR_BODY_TOO_LARGE',
    message: /^the body \(2\d{3} bytes\) is larger than MAX_BODY_BYTES \(1024 bytes\): raise MAX_BODY_BYTES to take it$/,
  },
  {
    name: 'text/plain is refused with 415 GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE',
    send: (post) => post(body, { 'content-type': 'text/plain', 'x-service': sign(TEST_KEY, body) }),
    status: 415,
    code: 'GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'a missing content type is refused with 415 GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE',
    send: (post) => post(body, { 'content-type': '', 'x-service': sign(TEST_KEY, body) }),
    status: 415,
    code: 'GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'a signed empty text/plain body is refused with 415',
    send: (post) => post('', { 'content-type': 'text/plain', 'x-service': sign(TEST_KEY, '') }),
    status: 415,
    code: 'GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE',
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const receiver = await startReceiver(t, redis, c.env);
    const response = await c.send(receiver.post);
    t.equal(response.status, c.status);
    const answer = (await response.json()) as Record<string, unknown>;
    t.equal(answer.code, c.code);
    t.equal(answer.statusCode, c.status);
    t.type(answer.error, 'string');
    t.match(answer.message, c.message ?? /./);
    t.equal(await countJobs(receiver.app), 0, 'nothing was enqueued');
  });
}

t.test('an unknown route answers 404 GEOHOOK_ERR_NOT_FOUND in the same shape', async (t) => {
  const receiver = await startReceiver(t, redis);
  const response = await fetch(`${receiver.url}/nowhere`);
  t.equal(response.status, 404);
  t.match(await response.json(), { statusCode: 404, code: 'GEOHOOK_ERR_NOT_FOUND', error: 'Not Found' });
});

t.test('a signed empty body with no content-type header at all is refused with 415 (no parser runs on it)', async (t) => {
  const receiver = await startReceiver(t, redis);
  for (const headers of [{ 'x-service': sign(TEST_KEY, '') }, { 'x-service': sign(TEST_KEY, ''), 'content-length': '0' }]) {
    const response = await receiver.app.inject({ method: 'POST', url: '/webhooks/default', headers });
    t.equal(response.headers['content-type']?.toString().startsWith('application/json'), true);
    t.match(response.json(), { statusCode: 415, code: 'GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE' });
  }
  t.equal(await countJobs(receiver.app), 0, 'nothing was enqueued');
});
