import t from 'tap';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook, webhooksOf } from '../helpers/geohook.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const SERVICE = 'Hosted/Parcels.FeatureServer';

t.test('the interval reactivates a deactivated webhook and recreates a deleted one', async (t) => {
  const emulator = await startEmulator(t);
  const config = configFile(t, { registration: { intervalSeconds: 0.2 } });
  const geohook = await startGeohook(t, redis, { ...registrationEnv(emulator, [SERVICE], uniquePrefix()), GEOHOOK_CONFIG: config });
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);
  const [registered] = await webhooksOf(emulator, SERVICE);

  await emulator.admin(`services/${SERVICE}/webhooks/deactivateAll`);
  t.equal((await webhooksOf(emulator, SERVICE))[0]?.active, false, 'deactivated');
  const reactivated = await waitFor('reactivation', async () => {
    const hooks = await webhooksOf(emulator, SERVICE);
    return hooks[0]?.active === true ? hooks : undefined;
  });
  t.equal(reactivated.length, 1);
  t.equal(reactivated[0]?.id, registered?.id, 'the same webhook is active again');

  await emulator.admin(`services/${SERVICE}/webhooks/deleteAll`);
  t.equal((await webhooksOf(emulator, SERVICE)).length, 0, 'deleted');
  const recreated = await waitFor('recreation', async () => {
    const hooks = await webhooksOf(emulator, SERVICE);
    return hooks.length > 0 ? hooks : undefined;
  });
  t.equal(recreated.length, 1, 'exactly one webhook is recreated');
  t.match(recreated[0], { hookUrl: registered?.hookUrl, active: true, signatureKey: registered?.signatureKey });
  t.not(recreated[0]?.id, registered?.id);
  t.equal((await geohook.readyz()).status, 200, 'the receiver stays ready');
});

t.test('the healing timer stops when the server closes', async (t) => {
  const emulator = await startEmulator(t);
  const config = configFile(t, { registration: { intervalSeconds: 0.1 } });
  const geohook = await startGeohook(t, redis, { ...registrationEnv(emulator, [SERVICE], uniquePrefix()), GEOHOOK_CONFIG: config });
  await waitFor('readiness', async () => (await geohook.readyz()).status === 200);
  await geohook.stop();
  await emulator.admin(`services/${SERVICE}/webhooks/deleteAll`);
  // A stopped timer has no event to await: five healing intervals pass, in which a live one would recreate it.
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.equal((await webhooksOf(emulator, SERVICE)).length, 0, 'nothing was recreated after close');
});
