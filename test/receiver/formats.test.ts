import { createHash } from 'node:crypto';
import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { eventOf } from '../helpers/envelope.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { fixture } from '../helpers/paths.js';
import { configFile, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const FORM = 'application/x-www-form-urlencoded';
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

async function jobOf(
  receiver: Awaited<ReturnType<typeof startReceiver>>,
  queue: 'gp-events' | 'feature-events' | 'unknown-events',
  id: string,
) {
  const job = await receiver.app.eventQueue.queue(queue).getJob(id);
  if (job === undefined) throw new Error(`no job ${id} in ${queue}`);
  return { name: job.name, data: eventOf(job) };
}

t.test('invalid UTF-8 inside a JSON string verifies and its rawBody round-trips byte for byte', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = fixture('invalid-utf8.json');
  t.equal(Buffer.compare(Buffer.from(body.toString('utf8')), body) !== 0, true, 'the fixture is not valid UTF-8');
  const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  t.equal(response.status, 202);
  const job = await jobOf(receiver, 'feature-events', sha256(body));
  t.equal(Buffer.compare(Buffer.from(job.data.rawBody, 'base64'), body), 0, 'rawBody is the exact bytes');
  t.equal(job.data.type, 'feature.FeaturesUpdated');
});

t.test('a charset parameter on application/json is accepted', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = fixture('enterprise-feature-created.json');
  const response = await receiver.post(body, { 'content-type': 'Application/JSON; charset=UTF-8', 'x-service': sign(TEST_KEY, body) });
  t.equal(response.status, 202);
  t.equal((await jobOf(receiver, 'feature-events', sha256(body))).data.contentType, 'application/json');
});

t.test('a GP job delivery goes to gp-events with the job outcome as its type', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = fixture('enterprise-gp-cancelled.json');
  t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202);
  const job = await jobOf(receiver, 'gp-events', sha256(body));
  t.equal(job.name, 'gp.job.canceled');
  t.match(job.data, {
    family: 'gp',
    types: ['gp.job.canceled'],
    service: { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' },
  });
});

t.test('a verified delivery that fits no family goes to unknown-events', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = Buffer.from('{"hello":"world"}');
  t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202);
  const job = await jobOf(receiver, 'unknown-events', sha256(body));
  t.match(job.data, { type: 'unknown', types: ['unknown'], family: 'unknown', payload: { hello: 'world' } });
});

t.test('an ArcGIS Online array reporting several events lists every type once, in order', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = fixture('agol-multi-event.json');
  t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202);
  const job = await jobOf(receiver, 'feature-events', sha256(body));
  t.equal(job.name, 'feature.FeaturesCreated');
  t.same(job.data.types, ['feature.FeaturesCreated', 'feature.FeaturesUpdated']);
});

t.test('the real product header x-esriHook-Signature is accepted too', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = fixture('enterprise-feature-created.json');
  t.equal((await receiver.post(body, { 'x-esriHook-Signature': sign(TEST_KEY, body) })).status, 202);
});

t.test('a URL-encoded hex signature in the header is accepted', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = fixture('enterprise-feature-created.json');
  const hex = createHash('sha256').update(body).digest('hex'); // not the HMAC: must be refused
  t.equal((await receiver.post(body, { 'x-service': `sha256%3D${hex}` })).status, 401);
  const hmacHex = Buffer.from(sign(TEST_KEY, body).slice(7), 'base64').toString('hex').toUpperCase();
  t.equal((await receiver.post(body, { 'x-service': encodeURIComponent(`sha256=${hmacHex}`) })).status, 202);
});

t.test('any key of HOOK_SECRETS verifies (rotation)', async (t) => {
  const receiver = await startReceiver(t, redis, { HOOK_SECRETS: 'old-key, new-key' });
  const a = Buffer.from('{"n":1}');
  const b = Buffer.from('{"n":2}');
  t.equal((await receiver.post(a, { 'x-service': sign('old-key', a) })).status, 202);
  t.equal((await receiver.post(b, { 'x-service': sign('new-key', b) })).status, 202);
  t.equal((await receiver.post(b, { 'x-service': sign(TEST_KEY, b) })).status, 401);
});

t.test('SIGNATURE_HEADER chooses the header that carries the signature', async (t) => {
  const receiver = await startReceiver(t, redis, { SIGNATURE_HEADER: 'X-Hub-Signature-256' });
  const body = Buffer.from('{"n":3}');
  t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 401);
  t.equal((await receiver.post(body, { 'x-hub-signature-256': sign(TEST_KEY, body) })).status, 202);
});

t.test('an Enterprise form delivery signed in the header verifies over the exact body', async (t) => {
  const receiver = await startReceiver(t, redis);
  const json = fixture('enterprise-feature-created.json').toString('utf8');
  const body = Buffer.from(`payload=${encodeURIComponent(json)}`);
  t.equal((await receiver.post(body, { 'content-type': FORM, 'x-service': sign(TEST_KEY, body) })).status, 202);
  const job = await jobOf(receiver, 'feature-events', sha256(body));
  t.equal(job.data.contentType, FORM);
  t.same(job.data.payload, { payload: JSON.parse(json) }, 'the payload field holding JSON is parsed');
  t.equal(job.data.type, 'feature.FeaturesCreated');
});

t.test('an ArcGIS Online form signed in the x-esriHook-Signature field over the raw payload value verifies', async (t) => {
  const receiver = await startReceiver(t, redis);
  const body = fixture('agol-form-signed.txt');
  t.equal((await receiver.post(body, { 'content-type': FORM })).status, 202);
  const job = await jobOf(receiver, 'feature-events', sha256(body));
  t.equal(job.data.verified, true);
  t.same(Object.keys(job.data.payload as object), ['payload'], 'the signature field is not kept in the payload');
  t.equal(job.data.type, 'feature.FeaturesCreated');
});

t.test('an ArcGIS Online form signed over the decoded payload value verifies', async (t) => {
  const receiver = await startReceiver(t, redis);
  t.equal((await receiver.post(fixture('agol-form-signed-decoded.txt'), { 'content-type': FORM })).status, 202);
});

t.test('an ArcGIS Online form whose payload was altered is refused', async (t) => {
  const receiver = await startReceiver(t, redis);
  const tampered = Buffer.from(fixture('agol-form-signed.txt').toString('latin1').replace('webhookname', 'webhooknamX'), 'latin1');
  const response = await receiver.post(tampered, { 'content-type': FORM });
  t.equal(response.status, 401);
  t.match(await response.json(), { code: 'GEOHOOK_ERR_BAD_SIGNATURE' });
});

t.test('with REQUIRE_SIGNATURE=false an unsigned delivery is accepted as unverified', async (t) => {
  const receiver = await startReceiver(t, redis, { REQUIRE_SIGNATURE: 'false' });
  const body = Buffer.from('{"unsigned":true}');
  t.equal((await receiver.post(body)).status, 202);
  t.equal((await jobOf(receiver, 'unknown-events', sha256(body))).data.verified, false);
  const forged = Buffer.from('{"forged":true}');
  t.equal((await receiver.post(forged, { 'x-service': sign('wrong', forged) })).status, 401, 'a wrong signature is still refused');
});

t.test('with REQUIRE_SIGNATURE=false a hook without keys accepts deliveries unverified', async (t) => {
  const receiver = await startReceiver(t, redis, { REQUIRE_SIGNATURE: 'false', HOOK_SECRETS: '' });
  const body = Buffer.from('{"open":true}');
  t.equal((await receiver.post(body, { 'x-service': sign('anything', body) })).status, 202);
  t.equal((await jobOf(receiver, 'unknown-events', sha256(body))).data.verified, false);
});

t.test('hooks from GEOHOOK_CONFIG receive with their own keys', async (t) => {
  const receiver = await startReceiver(t, redis, {
    GEOHOOK_CONFIG: configFile(t, { hooks: [{ name: 'parcels', secrets: ['parcels-key'] }] }),
  });
  const body = fixture('enterprise-feature-created.json');
  t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) }, 'parcels')).status, 401);
  t.equal((await receiver.post(body, { 'x-service': sign('parcels-key', body) }, 'parcels')).status, 202);
  t.equal((await jobOf(receiver, 'feature-events', sha256(body))).data.hook, 'parcels');
});

t.test('the crc_token challenge is answered with the hook first key', async (t) => {
  const receiver = await startReceiver(t, redis);
  const response = await fetch(`${receiver.url}/webhooks/default?crc_token=challenge-123`);
  t.equal(response.status, 200);
  // openssl dgst -sha256 -hmac geohook-test-key -binary <<< 'challenge-123' (no newline) | base64
  t.same(await response.json(), { response_token: 'sha256=1iJufcgmbmfSkyI+uPDQg7uFGBGo3fWYhpLnQlTpnNU=' });
});

t.test('a challenge without crc_token, or on a hook without keys, is refused with its code', async (t) => {
  const receiver = await startReceiver(t, redis, { HOOK_SECRETS: '' });
  const missing = await fetch(`${receiver.url}/webhooks/default`);
  t.equal(missing.status, 400);
  t.match(await missing.json(), { code: 'GEOHOOK_ERR_MISSING_CRC_TOKEN' });
  const noKey = await fetch(`${receiver.url}/webhooks/default?crc_token=x`);
  t.equal(noKey.status, 404);
  t.match(await noKey.json(), { code: 'GEOHOOK_ERR_NO_CRC_KEY' });
  const unknown = await fetch(`${receiver.url}/webhooks/nope?crc_token=x`);
  t.match(await unknown.json(), { code: 'GEOHOOK_ERR_UNKNOWN_HOOK' });
});

t.test('geohook doctor’s probe (a GET without crc_token) is refused as any, but logged at debug, as the probe’s (issue 53)', async (t) => {
  const { logger, lines } = capturingLogger('debug');
  const receiver = await startReceiver(t, redis, {}, { loggerInstance: logger });
  const probe = await fetch(`${receiver.url}/webhooks/default`, { headers: { 'geohook-probe': 'doctor' } });
  t.equal(probe.status, 400);
  const other = await fetch(`${receiver.url}/webhooks/default`);
  t.equal(other.status, 400);
  const refusals = lines
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => /crc challenge refused/.test(line.msg))
    .map(({ level, msg }) => ({ level, msg }));
  t.same(refusals, [
    { level: 20, msg: "crc challenge refused (geohook doctor's probe)" },
    { level: 30, msg: 'crc challenge refused' },
  ]);
});
