import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { sign } from '../../../src/signature/sign.js';
import { startCli } from '../../helpers/cli.js';
import { editParcels, PARCELS } from '../../helpers/edits.js';
import { startEmulator } from '../../helpers/emulator.js';
import { registrationEnv } from '../../helpers/geohook.js';
import { startSink, type ReceivedRequest } from '../../helpers/http-sink.js';
import { uniquePrefix } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

// The reproductions of the security review (issue 33) against a spawned `geohook serve` registered on the
// emulator, with "attacker" servers on loopback that log every request they get and answer as the review's did.
t.setTimeout(2 * 60_000);

const KEY = 'super-secret-hook-key-AAAAAAAAAAAAAA';
const FORM = 'application/x-www-form-urlencoded';

/** The review's attacker: answers generateToken, the FeatureServer resource and extractChanges, and logs everything. */
async function attacker(t: Test): Promise<{ url: string; received: ReceivedRequest[] }> {
  return startSink(t, (request, response) => {
    const url = request.url ?? '';
    const body = url.includes('generateToken')
      ? { token: 'attacker-issued-token', expires: Date.now() + 3_600_000 }
      : url.includes('extractChanges')
        ? { layerServerGens: [{ id: 0, serverGen: 999 }], edits: [{ id: 0, features: { adds: [{ attributes: { OBJECTID: 1 } }] } }] }
        : { layers: [{ id: 0 }], changeTrackingInfo: { layerServerGens: [{ id: 0, serverGen: 9_007_199_254_740_990 }] } };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
}

const forged = (changesUrl: string, serviceName = 'Parcels') =>
  JSON.stringify({
    serviceType: 'FeatureServer',
    changesUrl,
    name: 'forged',
    folderName: 'Hosted',
    serviceName,
    events: [{ eventType: 'FeaturesCreated', when: 1 }],
  });

t.test(
  'issue 33: the review reproduced against geohook serve: no forgery, no credential or request off the configured servers',
  async (t) => {
    const redis = await startRedis(t);
    const emulator = await startEmulator(t);
    const evil = await attacker(t);
    // A "legit" server the configuration trusts, whose every answer redirects to the attacker (M1).
    const legit = await startSink(t, (_request, response) => response.writeHead(307, { location: `${evil.url}/stolen` }).end());
    const prefix = uniquePrefix();
    const port = await findFreePort();
    const env = {
      ...registrationEnv(emulator, [PARCELS, 'Tools/Buffer.GPServer'], prefix),
      REDIS_URL: redis.url,
      HOOK_SECRETS: KEY,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      TRUSTED_ORIGINS: legit.url,
      LOG_LEVEL: 'debug',
    };
    const serve = await startCli(['serve', '--host', '127.0.0.1', '--port', String(port)], env, /Server listening/);
    t.teardown(() => void (serve.child as ChildProcess).kill('SIGKILL'));
    const base = `http://127.0.0.1:${port}`;
    await waitFor('registered', async () => (await fetch(`${base}/readyz`)).status === 200);
    const raw = new Redis(redis.url);
    t.teardown(() => raw.disconnect());
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${base}/webhooks/default`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

    // C1: the challenge signs no delivery, as JSON or as ArcGIS Online's form.
    const body = forged(`${evil.url}/evil/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[10,11]`);
    const challenge = await fetch(`${base}/webhooks/default?crc_token=${encodeURIComponent(body)}`);
    t.equal(challenge.status, 400, 'C1: no answer for a body');
    const token = 'AAAA0000';
    const { response_token: answer } = (await (await fetch(`${base}/webhooks/default?crc_token=${token}`)).json()) as {
      response_token: string;
    };
    t.equal((await post(token, { 'x-esriHook-Signature': answer })).status, 401, 'C1: an answer signs no delivery');
    const online = `payload=${token}&x-esriHook-Signature=${encodeURIComponent(answer)}`;
    t.equal((await post(online, { 'content-type': FORM })).status, 401, 'C1: nor an Online form');

    // M2: an anonymous deep body is refused for its signature.
    const deep = `${'['.repeat(500_000)}${']'.repeat(500_000)}`;
    t.equal((await post(deep, {})).status, 401, 'M2: unsigned, refused before any parse');

    // C2, H1: a key holder's deliveries naming the attacker, in and far out of bounds, and one naming a trusted
    // server that redirects; for the registered Parcels and for a service geohook does not register.
    const before = await editParcels(emulator, 'FeaturesCreated');
    await waitFor(
      'the real edit delivered and counted',
      async () => Number(await raw.hget(`${prefix}:watermarks`, `default ${PARCELS}`)) === before,
    );
    const signed = async (text: string) =>
      (await post(text, { 'x-esriHook-Signature': sign(KEY, text) })).json() as Promise<{ duplicate: boolean }>;
    const huge = '[9007199254740000,9007199254740990]';
    for (const changesUrl of [
      `${evil.url}/evil/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=${huge}`,
      `${evil.url}/evil/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[${before},${before + 1}]`,
      `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=${huge}`,
    ]) {
      t.match(await signed(forged(changesUrl)), { duplicate: false }, `accepted as a key holder's delivery: ${changesUrl.slice(0, 60)}`);
    }
    const other = forged(`${legit.url}/arcgis/rest/services/Hosted/Other/FeatureServer/extractChanges?serverGens=[1,2]`, 'Other');
    t.match(await signed(other), { duplicate: false });
    await waitFor('the trusted server asked once, and its redirect not followed', () => legit.received.length >= 1);

    // The next real edit: delivered, not a duplicate, and counted once the server confirms it.
    const after = await editParcels(emulator, 'FeaturesCreated');
    await waitFor(
      'the watermark at the real edit',
      async () => Number(await raw.hget(`${prefix}:watermarks`, `default ${PARCELS}`)) === after,
    );
    const accepted = serve
      .output()
      .split('\n')
      .filter((line) => line.includes('"delivery accepted"'))
      .map((line) => JSON.parse(line) as { duplicate: boolean });
    t.equal(accepted.at(-1)?.duplicate, false, 'H1: the real edit after the forgeries is no duplicate');
    t.equal(await raw.hget(`${prefix}:watermarks`, 'default Hosted/Other.FeatureServer'), null, 'the redirecting server confirmed nothing');

    t.same(evil.received, [], 'C2, M1: the attacker got no request at all: no password, no token, no read');
    t.same(
      [...new Set(legit.received.map(({ method, url, body }) => `${method} ${url} ${new URLSearchParams(body.toString()).has('token')}`))],
      ['POST /arcgis/rest/services/Hosted/Other/FeatureServer true'],
      'the trusted server was read with the token (again after each failure), and its 307 never followed',
    );
    t.notMatch(serve.output(), /admin\.pass|attacker-issued-token/, 'no credential in the log');
  },
);
