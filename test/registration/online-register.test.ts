import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import type { OnlineWebhook } from '../../src/arcgis/webhook.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import type { GeohookEvent } from '../../src/events/envelope.js';
import { PingLog } from '../../src/queue/ping-log.js';
import { connectRedis } from '../../src/redis/connection.js';
import { rotateKey } from '../../src/registration/rotate-key.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { eventOf } from '../helpers/envelope.js';
import { registrationEnv, startGeohook, type TestGeohook } from '../helpers/geohook.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// geohook serve registering itself on the emulator's ArcGIS Online organization.

const redis = await startRedis(t);
const SERVICE = 'Parcels.FeatureServer';

/** The environment that registers the `default` hook on Parcels in the emulator's Online organization. */
function onlineEnv(
  emulator: TestEmulator,
  prefix: string,
  extra: Record<string, string> = {},
): Record<string, string> & { ADMIN_URL: string } {
  return { ...registrationEnv(emulator, [SERVICE], prefix), ADMIN_URL: `${emulator.url}/geohookOrg/ArcGIS/rest/admin`, ...extra };
}

/** Parcels' webhooks in the organization, through its admin API. */
async function onlineWebhooks(emulator: TestEmulator): Promise<OnlineWebhook[]> {
  const token = await emulator.token();
  const answer = await fetch(`${emulator.url}/geohookOrg/ArcGIS/rest/admin/services/Parcels/FeatureServer/WebHooks?f=json&token=${token}`);
  return (await answer.json()) as OnlineWebhook[];
}

/** Fires an edit of Parcels and waits for geohook to hold it as a feature event; returns the event and the edit's range. */
async function editReceived(
  emulator: TestEmulator,
  geohook: TestGeohook,
  edit: Record<string, unknown> = {},
): Promise<{ event: GeohookEvent; serverGens: [number, number] }> {
  const fired = await emulator.control('services/Hosted/Parcels.FeatureServer/edits', edit);
  const serverGens = fired.body.layerGens as [number, number];
  const event = await waitFor('the edit as a feature event', async () => {
    const jobs = await geohook.server.app.eventQueue.queue('feature-events').getJobs();
    return jobs.map(eventOf).find((data) => data.changes?.serverGens[1] === serverGens[1]);
  });
  return { event, serverGens };
}

t.test(
  'geohook serve registers on an Online hosted feature layer (challenge passed), receives its edits with changes decoded and records its status ping without queuing it',
  async (t) => {
    const emulator = await startEmulator(t);
    const prefix = uniquePrefix();
    const env = onlineEnv(emulator, prefix);
    const geohook = await startGeohook(t, redis, env);
    await waitFor('registered and ready', async () => (await geohook.readyz()).status === 200, { timeoutMs: 15_000 });
    const token = await emulator.token();
    const list = (): Promise<OnlineWebhook[]> => onlineWebhooks(emulator);
    const hooks = await list();
    t.equal(hooks.length, 1, 'one webhook on the layer');
    t.match(hooks[0], { active: true, hookUrl: `${geohook.url}/webhooks/default` });

    const { event, serverGens } = await editReceived(emulator, geohook, { changeType: 'FeaturesCreated', layerId: 1 });
    t.match(event, { type: 'feature.FeaturesCreated', verified: true, changes: { serverGens, layerId: 1 } });

    // The webhook's status ping: recorded by geohook, handed to no handler (no job).
    const jobsBefore = await geohook.server.app.eventQueue.queue('feature-events').count();
    await fetch(`${emulator.url}/geohookOrg/ArcGIS/rest/admin/services/Parcels/FeatureServer/WebHooks/${hooks[0]!.globalId}/status`, {
      method: 'POST',
      body: new URLSearchParams({ token, f: 'json' }),
    });
    const connection = connectRedis({ url: redis.url });
    t.teardown(() => connection.disconnect());
    const pings = new PingLog(connection, prefix);
    await waitFor('the ping recorded', async () => (await pings.lastPings()).default !== undefined);
    t.equal(await geohook.server.app.eventQueue.queue('feature-events').count(), jobsBefore, 'the ping is no feature event');

    // Down for two failed deliveries: Online's policy (numberOfFailures 2 here) deactivates the webhook.
    await fetch(`${emulator.url}/geohookOrg/ArcGIS/rest/admin/webhooks/webhookSettings`, {
      method: 'POST',
      body: new URLSearchParams({ numberOfFailures: '2', token, f: 'json' }),
    });
    await geohook.stop();
    for (let edit = 0; edit < 2; edit += 1) await emulator.control('services/Hosted/Parcels.FeatureServer/edits', {});
    await waitFor('the webhook deactivated', async () => (await list())[0]?.active === false);

    const again = await startGeohook(t, redis, { ...env, PORT: String(geohook.port) });
    await waitFor('ready again', async () => (await again.readyz()).status === 200, { timeoutMs: 15_000 });
    const after = await list();
    t.equal(after.length, 1, 'a restart registers no second webhook');
    t.match(after[0], { active: true, globalId: hooks[0]!.globalId }, 'registration reactivated the same webhook');
  },
);

t.test('five failed deliveries deactivate the Online webhook while Redis is down; healing reactivates it once Redis is back', async (t) => {
  const emulator = await startEmulator(t);
  const own = await startRedis(t);
  const geohook = await startGeohook(
    t,
    own,
    onlineEnv(emulator, uniquePrefix(), { GEOHOOK_CONFIG: configFile(t, { registration: { intervalSeconds: 0.2 } }) }),
  );
  await waitFor('registered and ready', async () => (await geohook.readyz()).status === 200, { timeoutMs: 15_000 });
  const webhook = async (): Promise<OnlineWebhook | undefined> => (await onlineWebhooks(emulator))[0];
  const registered = await webhook();

  await own.stop();
  for (let edit = 0; edit < 5; edit += 1) await emulator.control('services/Hosted/Parcels.FeatureServer/edits', {});
  await waitFor('the webhook deactivated after five consecutive failures', async () => (await webhook())?.active === false);

  await own.start();
  const healed = await waitFor('healing reactivates it', async () => {
    const current = await webhook();
    return current?.active === true ? current : undefined;
  });
  t.equal(healed.globalId, registered?.globalId, 'the same webhook');
  await editReceived(emulator, geohook);
  t.pass('deliveries flow again');
});

t.test('the generated key rotates on an Online webhook: the challenge of the edit is answered with the new key', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const env = onlineEnv(emulator, prefix, { GEOHOOK_CONFIG: configFile(t, { keyReloadSeconds: 0.1 }) });
  const geohook = await startGeohook(t, redis, env);
  await waitFor('registered and ready', async () => (await geohook.readyz()).status === 200, { timeoutMs: 15_000 });
  const client = connectRedis({ url: redis.url });
  t.teardown(() => client.disconnect());
  const admin = createAdminClient({ baseUrl: env.ADMIN_URL, auth: { username: 'admin', password: 'admin.pass' } });
  const [before] = await admin.webhooks.listAll(SERVICE);

  const result = await rotateKey({
    client: admin,
    redis: client,
    prefix,
    hookUrl: `${geohook.url}/webhooks/default`,
    services: [SERVICE],
    propagationMs: 500,
    graceMs: 100,
  });
  t.match(result, { status: 'success', services: [{ service: SERVICE, action: 'updated', webhookIds: [before!.id] }] });
  const [after] = await admin.webhooks.listAll(SERVICE);
  const keys = await client.lrange(`${prefix}:hooks:default:keys`, 0, -1);
  t.same(keys, [after!.signatureKey], 'the webhook holds the one key left in Redis');
  t.not(after!.signatureKey, before!.signatureKey, 'a new key');

  await editReceived(emulator, geohook);
  t.pass('verified with the new key');
});

t.test('three replicas starting at once leave exactly one webhook on the Online layer', async (t) => {
  const emulator = await startEmulator(t);
  const publicPort = await findFreePort();
  const env = onlineEnv(emulator, uniquePrefix(), {
    PUBLIC_URL: `http://127.0.0.1:${publicPort}`,
    GEOHOOK_CONFIG: configFile(t, { keyReloadSeconds: 0.1 }),
  });
  // Online's challenge goes to PUBLIC_URL, the first replica, whichever replica registers.
  const replicas = await Promise.all([
    startGeohook(t, redis, { ...env, PORT: String(publicPort) }),
    startGeohook(t, redis, env),
    startGeohook(t, redis, env),
  ]);
  for (const replica of replicas) {
    await waitFor('readiness of every replica', async () => (await replica.readyz()).status === 200, { timeoutMs: 20_000 });
  }
  const admin = createAdminClient({ baseUrl: env.ADMIN_URL, auth: { username: 'admin', password: 'admin.pass' } });
  const hooks = await admin.webhooks.listAll(SERVICE);
  t.equal(hooks.length, 1, 'one webhook');
  t.match(hooks[0], {
    hookUrl: `${env.PUBLIC_URL}/webhooks/default`,
    active: true,
    signatureKey: replicas[0]!.server.app.hookKeys.generated('default')[0],
  });
});
