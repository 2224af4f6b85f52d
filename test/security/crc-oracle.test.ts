import t from 'tap';
import { sign } from '../../src/signature/sign.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { configFile, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const FORM = 'application/x-www-form-urlencoded';

/** The review's forged delivery (issue 33, C1): a feature event pointing the backfill at an attacker. */
const FORGED = JSON.stringify({
  serviceType: 'FeatureServer',
  changesUrl: 'http://127.0.0.1:19090/evil/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[10,11]',
  name: 'forged',
  folderName: 'Hosted',
  serviceName: 'Parcels',
  events: [{ eventType: 'FeaturesCreated', when: 1 }],
});

t.test('issue 33 C1: the challenge signs no body a delivery could have, so it forges none', async (t) => {
  const receiver = await startReceiver(t, redis);
  const challenge = await fetch(`${receiver.url}/webhooks/default?crc_token=${encodeURIComponent(FORGED)}`);
  t.equal(challenge.status, 400);
  t.match(await challenge.json(), { code: 'GEOHOOK_ERR_BAD_CRC_TOKEN' });

  // A body made only of the token alphabet is what a challenge answer could sign: never accepted, even rightly signed.
  const token = 'abcDEF0123456789-_.~+/=';
  const answer = (await (await fetch(`${receiver.url}/webhooks/default?crc_token=${encodeURIComponent(token)}`)).json()) as {
    response_token: string;
  };
  t.equal(answer.response_token, sign(TEST_KEY, token), 'a token of the alphabet is answered with the real HMAC');
  for (const contentType of ['application/json', FORM]) {
    const response = await receiver.post(token, { 'content-type': contentType, 'x-esriHook-Signature': answer.response_token });
    t.equal(response.status, 401, `${contentType}: refused`);
    t.match(await response.json(), { code: 'GEOHOOK_ERR_BAD_SIGNATURE' });
  }
  const online = await receiver.post(`payload=${token}&x-esriHook-Signature=${encodeURIComponent(answer.response_token)}`, {
    'content-type': FORM,
  });
  t.equal(online.status, 401, 'the ArcGIS Online form signed in a field: refused');
  t.equal((await receiver.post(FORGED, { 'x-service': sign(TEST_KEY, FORGED) })).status, 202, 'a rightly signed delivery still passes');
});

t.test('a hook may turn challenges off; answers are logged without the token and counted', async (t) => {
  const { logger, lines } = capturingLogger('info');
  const receiver = await startReceiver(
    t,
    redis,
    { GEOHOOK_CONFIG: configFile(t, { hooks: [{ name: 'quiet', secrets: ['quiet-key'], crc: false }] }) },
    { loggerInstance: logger },
  );
  const off = await fetch(`${receiver.url}/webhooks/quiet?crc_token=abc123`);
  t.equal(off.status, 404);
  t.match(await off.json(), { code: 'GEOHOOK_ERR_NO_CRC_KEY', message: /crc: false/ });
  t.equal((await fetch(`${receiver.url}/webhooks/default?crc_token=secret-token-42`)).status, 200);

  const logged = lines.map((line) => JSON.parse(line) as { msg: string; hook?: string; tokenLength?: number; code?: string });
  t.match(
    logged.find((line) => line.msg === 'crc challenge answered'),
    { hook: 'default', tokenLength: 15 },
  );
  t.match(
    logged.find((line) => line.msg === 'crc challenge refused'),
    { hook: 'quiet', code: 'GEOHOOK_ERR_NO_CRC_KEY' },
  );
  const metrics = await (await fetch(`${receiver.url}/metrics`)).text();
  t.match(metrics, /geohook_crc_challenges_total\{hook="default",outcome="answered"\} 1/);
  t.match(metrics, /geohook_crc_challenges_total\{hook="quiet",outcome="GEOHOOK_ERR_NO_CRC_KEY"\} 1/);
});
