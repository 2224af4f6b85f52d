import t from 'tap';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook, webhooksOf } from '../helpers/geohook.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const SERVICES = ['Tools/Buffer.GPServer', 'Hosted/Parcels.FeatureServer'];

t.test('a restart adopts the webhooks it registered before and creates none', async (t) => {
  const emulator = await startEmulator(t);
  const env = { ...registrationEnv(emulator, SERVICES, uniquePrefix()), PORT: String(await findFreePort()) };
  const first = await startGeohook(t, redis, env);
  await waitFor('first readiness', async () => (await first.readyz()).status === 200);
  const before = await Promise.all(SERVICES.map((service) => webhooksOf(emulator, service)));
  await first.stop();

  const second = await startGeohook(t, redis, env);
  await waitFor('readiness after the restart', async () => (await second.readyz()).status === 200);
  for (const [index, service] of SERVICES.entries()) {
    const after = await webhooksOf(emulator, service);
    t.equal(after.length, 1, `${service} still has exactly one webhook`);
    t.equal(after[0]?.id, before[index]![0]?.id, `${service} keeps the same webhook`);
    t.equal(after[0]?.active, true);
  }
  t.match(second.log(), /"action":"unchanged"/, 'the restart found nothing to change');
});

t.test('three receivers starting at once on one Redis leave exactly one webhook per service', async (t) => {
  const emulator = await startEmulator(t);
  const publicPort = await findFreePort();
  const env = { ...registrationEnv(emulator, SERVICES, uniquePrefix()), PUBLIC_URL: `http://127.0.0.1:${publicPort}` };
  const replicas = await Promise.all([
    startGeohook(t, redis, { ...env, PORT: String(publicPort) }),
    startGeohook(t, redis, env),
    startGeohook(t, redis, env),
  ]);
  for (const replica of replicas) await waitFor('readiness of every replica', async () => (await replica.readyz()).status === 200);
  const keys = replicas.map((replica) => replica.server.app.hookKeys.generated('default'));
  t.equal(keys[0]?.length, 1, 'one key was generated');
  t.strictSame(keys[1], keys[0], 'the replicas share it');
  t.strictSame(keys[2], keys[0]);
  for (const service of SERVICES) {
    const hooks = await webhooksOf(emulator, service);
    t.equal(hooks.length, 1, `${service} has exactly one webhook`);
    t.match(hooks[0], { hookUrl: `${env.PUBLIC_URL}/webhooks/default`, active: true, signatureKey: keys[0]![0] });
  }
});

t.test('extra webhooks with our hookUrl are deleted, one is kept', async (t) => {
  const emulator = await startEmulator(t);
  const port = await findFreePort();
  const hookUrl = `http://127.0.0.1:${port}/webhooks/default`;
  for (let copy = 0; copy < 2; copy += 1) {
    await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', {
      name: `copy${copy}`,
      hookUrl,
      signatureKey: 'some-key',
      active: 'true',
    });
  }
  await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', { name: 'someone-else', hookUrl: 'http://127.0.0.1:9/elsewhere' });
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, ['Tools/Buffer.GPServer'], uniquePrefix()),
    PORT: String(port),
    HOOK_SECRETS: 'some-key',
  });
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);
  const hooks = await webhooksOf(emulator, 'Tools/Buffer.GPServer');
  t.strictSame(
    hooks.map((hook) => hook.name).sort(),
    ['copy0', 'someone-else'],
    'the first copy is adopted, the second deleted, the foreign one kept',
  );
});

t.test('an adopted webhook signed with another key is switched to ours', async (t) => {
  const emulator = await startEmulator(t);
  const port = await findFreePort();
  const hookUrl = `http://127.0.0.1:${port}/webhooks/default`;
  await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', {
    name: 'old',
    hookUrl,
    signatureKey: 'stale-key',
    active: 'true',
  });
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, ['Tools/Buffer.GPServer'], uniquePrefix()),
    PORT: String(port),
    HOOK_SECRETS: 'fresh-key',
  });
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);
  const hooks = await webhooksOf(emulator, 'Tools/Buffer.GPServer');
  t.equal(hooks.length, 1);
  t.match(hooks[0], { name: 'old', signatureKey: 'fresh-key', active: true });
});
