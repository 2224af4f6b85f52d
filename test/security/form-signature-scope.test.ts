import t from 'tap';
import { startEmulator } from '../helpers/emulator.js';
import { fixture } from '../helpers/paths.js';
import { startReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

t.test('a form signed in a field is refused when it holds anything the signature does not cover', async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis);
  const signed = fixture('agol-form-signed.txt').toString();
  t.equal((await receiver.post(signed, FORM)).status, 202, 'as signed: accepted');
  for (const [what, forged] of [
    ['an extra field', `${signed}&changesUrl=https%3A%2F%2Fattacker.example`],
    ['a second payload', `${signed}&payload=%7B%22forged%22%3Atrue%7D`],
  ] as const) {
    const response = await receiver.post(forged, FORM);
    t.equal(response.status, 401, `${what}: refused`);
    t.match(await response.json(), { code: 'GEOHOOK_ERR_BAD_SIGNATURE', message: /only one payload field and the signature/ });
  }
});

t.test('a signature header of spaces and tabs is absent: the form field signs the delivery, over HTTP and injected alike', async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis);
  const signed = fixture('agol-form-signed.txt').toString();
  for (const blank of ['\t', ' ', ' \t ']) {
    t.equal((await receiver.post(signed, { ...FORM, 'x-service': blank })).status, 202, `x-service ${JSON.stringify(blank)} over HTTP`);
    const injected = await receiver.app.inject({
      method: 'POST',
      url: '/webhooks/default',
      headers: { ...FORM, 'x-service': blank },
      payload: signed,
    });
    t.equal(injected.statusCode, 202, `x-service ${JSON.stringify(blank)} injected`);
  }
  t.equal((await receiver.post(signed, { ...FORM, 'x-service': ' x ' })).status, 401, 'anything else in the header is what counts');
});

t.test('the emulator answers a non-string f without a 500', async (t) => {
  const emulator = await startEmulator(t);
  const response = await emulator.app.inject({
    method: 'POST',
    url: '/arcgis/admin/services/findServices',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ f: { toString: 1 } }),
  });
  t.ok(response.statusCode < 500, `answered ${response.statusCode}`);
});
