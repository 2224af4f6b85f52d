import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import type { ServicePlacementPolicy } from '../../src/arcgis/placement-policy.js';
import { loadConfig } from '../../src/config/load-config.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook, webhooksOf } from '../helpers/geohook.js';
import { fixture } from '../helpers/paths.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const SERVICES = ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'];
const settings = {
  notificationAttempts: 5,
  notificationTimeOutInSeconds: 20,
  notificationElapsedTimeInSeconds: 7,
  numberOfFailures: 9,
  daysInPast: 3,
};
const policy = JSON.parse(fixture('placement-policy.json').toString('utf8')) as ServicePlacementPolicy;

t.test('an organisation administrator applies the settings and placement policy of GEOHOOK_CONFIG at start-up', async (t) => {
  const emulator = await startEmulator(t);
  const env = {
    ...registrationEnv(emulator, SERVICES, uniquePrefix()),
    ADMIN_USERNAME: 'orgadmin',
    ADMIN_PASSWORD: 'orgadmin.pass',
    GEOHOOK_CONFIG: configFile(t, { settings, placement: { 'Tools/Buffer.GPServer': policy } }),
  };
  const geohook = await startGeohook(t, redis, env);
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'orgadmin', password: 'orgadmin.pass' } });
  t.same(await client.settings.get(), settings, 'the five settings are set');
  t.same(await client.placement.get('Tools/Buffer.GPServer'), policy, 'the placement policy is set');
  t.same(await client.placement.get('Hosted/Parcels.FeatureServer'), { placementPolicy: [] }, 'other services are left alone');
  for (const service of SERVICES) t.equal((await webhooksOf(emulator, service)).length, 1, `${service} is registered`);
  t.match(geohook.log(), /organisation webhook settings applied/);
});

t.test('settings a plain administrator may not set are logged and keep the receiver not ready', async (t) => {
  const emulator = await startEmulator(t);
  const env = {
    ...registrationEnv(emulator, SERVICES, uniquePrefix()),
    GEOHOOK_CONFIG: configFile(t, {
      settings: { notificationAttempts: 4 },
      registration: { retryInitialSeconds: 0.05, retryMaxSeconds: 0.2 },
    }),
  };
  const geohook = await startGeohook(t, redis, env);
  const readyz = await waitFor('a failed pass', async () => {
    const answer = await geohook.readyz();
    return answer.reason?.startsWith('registration failed') === true ? answer : undefined;
  });
  t.equal(readyz.status, 503);
  t.match(readyz.reason, /settings: /);
  t.match(geohook.log(), /organisation webhook settings not applied/);
  for (const service of SERVICES) t.equal((await webhooksOf(emulator, service)).length, 1, `${service} is still registered`);
});

t.test('GEOHOOK_CONFIG settings and placement are validated', async (t) => {
  const load = (content: unknown) => () => loadConfig({ GEOHOOK_CONFIG: configFile(t, content) });
  t.throws(load({ settings: { notificationAttempts: 9 } }), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /settings\.notificationAttempts": an integer from 1 to 5/,
  });
  t.throws(load({ settings: { retries: 2 } }), { code: 'GEOHOOK_ERR_CONFIG', message: /settings/ });
  t.throws(load({ placement: { 'not a service': policy } }), { code: 'GEOHOOK_ERR_CONFIG', message: /placement/ });
  t.throws(load({ placement: { 'Buffer.GPServer': { placementPolicy: 'none' } } }), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /placement\['Buffer\.GPServer'\]/,
  });
  const config = loadConfig({
    ADMIN_URL: 'http://127.0.0.1:9/arcgis/admin',
    GEOHOOK_CONFIG: configFile(t, { settings: { daysInPast: 2 }, placement: { 'Buffer.GPServer': policy } }),
  });
  t.same(config.admin?.settings, { daysInPast: 2 });
  t.same(config.admin?.placement, { 'Buffer.GPServer': policy });
});
