import t from 'tap';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { buildEmulator } from '../../src/emulator/build-emulator.js';
import { sign } from '../../src/signature/sign.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook, webhooksOf } from '../helpers/geohook.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const fastRetries = { registration: { retryInitialSeconds: 0.05, retryMaxSeconds: 0.2 } };

t.test('/readyz is 503 while the GIS server is down, the receiver keeps serving, and 200 once registration succeeds', async (t) => {
  const adminPort = await findFreePort();
  const env = {
    ADMIN_URL: `http://127.0.0.1:${adminPort}/arcgis/admin`,
    ADMIN_USERNAME: 'admin',
    ADMIN_PASSWORD: 'admin.pass',
    REGISTER: 'Tools/Buffer.GPServer',
    GEOHOOK_PREFIX: uniquePrefix(),
    HOOK_SECRETS: 'configured-key',
    GEOHOOK_CONFIG: configFile(t, fastRetries),
  };
  const geohook = await startGeohook(t, redis, env);
  const first = await geohook.readyz();
  t.equal(first.status, 503);
  t.match(first.reason, /^registration (pending|failed)/);
  const failing = await waitFor('a reported failure', async () => {
    const ready = await geohook.readyz();
    return ready.reason?.startsWith('registration failed') === true ? ready : undefined;
  });
  t.equal(failing.status, 503);
  t.match(
    failing.reason,
    `registration failed: cannot reach the admin API at ${env.ADMIN_URL}: `,
    'the reason names the cause and the value: one for every service',
  );
  t.match(geohook.log(), /"msg":"registration incomplete: retrying"/, 'the failure is logged');
  await waitFor('backoff to reach its maximum', async () => /"retryInMs":200,.*"retryInMs":200,/s.test(geohook.log()));
  const delays = [...geohook.log().matchAll(/"retryInMs":(\d+)/g)].map((match) => Number(match[1]));
  t.strictSame(delays.slice(0, 4), [50, 100, 200, 200], 'retries back off, doubling up to retryMaxSeconds');

  t.equal((await fetch(`${geohook.url}/healthz`)).status, 200, 'the process keeps serving');
  const body = '{"serviceType":"GPServer","jobId":"down","events":[{"eventType":"esriJobSucceeded"}]}';
  const delivery = await fetch(`${geohook.url}/webhooks/default`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service': sign('configured-key', body) },
    body,
  });
  t.equal(delivery.status, 202, 'deliveries are still accepted');

  const emulator = await buildEmulator({ logLevel: 'silent' });
  await emulator.listen({ host: '127.0.0.1', port: adminPort });
  t.teardown(() => emulator.close());
  await waitFor('readiness once the GIS server is up', async () => (await geohook.readyz()).status === 200);
  t.pass('ready once the GIS server answers');
  t.notOk(geohook.log().includes('configured-key'), 'the key never reaches the log');
  t.notOk(geohook.log().includes('admin.pass'), 'the password never reaches the log');
});

t.test('an unknown service in REGISTER is listed by /readyz, retried alone, and keeps neither the others nor readiness back', async (t) => {
  const emulator = await startEmulator(t);
  const env = {
    ...registrationEnv(emulator, ['Tools/Nowhere.GPServer', 'Tools/Buffer.GPServer'], uniquePrefix()),
    GEOHOOK_CONFIG: configFile(t, fastRetries),
  };
  const geohook = await startGeohook(t, redis, env);
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);
  const answer = (await (await fetch(`${geohook.url}/readyz`)).json()) as { registration: Record<string, unknown> };
  t.strictSame(answer.registration, {
    services: 2,
    registered: 1,
    failing: [{ service: 'Tools/Nowhere.GPServer', reason: 'service Tools/Nowhere.GPServer not found on the GIS server' }],
    failingCount: 1,
    unmatched: [],
    lastPassSeconds: answer.registration.lastPassSeconds,
  });
  t.equal((await webhooksOf(emulator, 'Tools/Buffer.GPServer')).length, 1, 'the known service is registered');
  t.match(
    geohook.log(),
    /"service":"Tools\/Nowhere.GPServer","reason":"service Tools\/Nowhere.GPServer not found on the GIS server","retryInMs":\d+,"msg":"service not registered: retrying it alone"/,
  );
  // Retried alone: the emulator sees findServices for the missing service only, never the known one's webhooks again.
  const before = emulator.requests.length;
  await waitFor('two retries of the missing service', async () =>
    emulator.requests.slice(before).filter((request) => request.includes('findServices')).length >= 2 ? true : undefined,
  );
  const since = emulator.requests.slice(before);
  t.notOk(
    since.some((request) => request.includes('Buffer.GPServer')),
    'the registered service is not walked again by the retries',
  );
  t.match(geohook.log(), /"msg":"service still not registered, same cause: retrying it alone"/);
  const metrics = await (await fetch(`${geohook.url}/metrics`)).text();
  t.match(metrics, /geohook_registration_services\{state="failing"\} 1/);
  t.match(metrics, /geohook_registration_failing\{service="Tools\/Nowhere.GPServer"\} 1/);

  // The GIS server gone: the missing service's retries wait for the admin API, at the pass's backoff, not in a loop.
  await emulator.app.close();
  const stopped = (): number => geohook.log().split('retry of failed services stopped').length - 1;
  await waitFor('a retry to meet the unreachable admin API', () => stopped() >= 1 || undefined);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  t.ok(stopped() < 20, `retries paused while the admin API cannot be used (${stopped()} in about a second, backoff 0.05 to 0.2 s)`);
});

t.test('a rejected token is reported without crashing', async (t) => {
  const emulator = await startEmulator(t);
  const { ADMIN_USERNAME: _user, ADMIN_PASSWORD: _password, ...env } = registrationEnv(emulator, ['Tools/Buffer.GPServer'], uniquePrefix());
  const geohook = await startGeohook(t, redis, { ...env, ADMIN_TOKEN: 'not-a-real-token', GEOHOOK_CONFIG: configFile(t, fastRetries) });
  const ready = await waitFor('the failure to be reported', async () => {
    const answer = await geohook.readyz();
    return answer.reason?.startsWith('registration failed') === true ? answer : undefined;
  });
  t.equal(ready.status, 503);
  t.notOk(ready.reason?.includes('not-a-real-token'), 'the reason does not show the token');
  t.notOk(geohook.log().includes('not-a-real-token'), 'nor does the log');
  t.equal((await fetch(`${geohook.url}/healthz`)).status, 200);
});
