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
  // The server shows the webhook active before geohook logs what it did.
  await waitFor('the repair logged, saying why', async () =>
    /"action":"reactivated","reason":"it was deactivated[^"]*","msg":"webhook reactivated"/.test(geohook.log()),
  );

  // A key someone typed on the server: set back to the receiver's, saying why.
  await emulator.admin(`services/${SERVICE}/webhooks/${registered!.id}/edit`, { signatureKey: 'the-wrong-key-someone-typed' });
  await waitFor('the key set back', async () => (await webhooksOf(emulator, SERVICE))[0]?.signatureKey === registered?.signatureKey);
  await waitFor('the update logged, saying why', async () =>
    /"action":"updated","reason":"its signature key was not the receiver's \(its deliveries were refused, 401\)[^"]*","msg":"webhook updated"/.test(
      geohook.log(),
    ),
  );

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
  const stopped = await startGeohook(t, redis, { ...registrationEnv(emulator, [SERVICE], uniquePrefix()), GEOHOOK_CONFIG: config });
  await waitFor('readiness', async () => (await stopped.readyz()).status === 200);
  await stopped.stop();
  const logAtStop = stopped.log();
  await emulator.admin(`services/${SERVICE}/webhooks/deleteAll`);
  // What comes after: a live geohook on the same interval heals its own webhook three times, passes in which the
  // stopped one, had its timer run on, would have recreated its own.
  const live = await startGeohook(t, redis, { ...registrationEnv(emulator, [SERVICE], uniquePrefix()), GEOHOOK_CONFIG: config });
  for (let heal = 0; heal <= 3; heal += 1) {
    const hooks = await waitFor(`the live geohook's webhook (pass ${heal})`, async () => {
      const found = await webhooksOf(emulator, SERVICE);
      return found.length > 0 ? found : undefined;
    });
    t.same(
      hooks.map((hook) => new URL(hook.hookUrl).port),
      [String(live.port)],
      `pass ${heal}: only the live geohook's webhook`,
    );
    await emulator.admin(`services/${SERVICE}/webhooks/deleteAll`);
  }
  t.equal(stopped.log(), logAtStop, 'the stopped geohook tried no pass (a live timer would log its failure)');
});
