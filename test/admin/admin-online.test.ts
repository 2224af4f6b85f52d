import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { AdminApiError } from '../../src/errors.js';
import { startEmulator } from '../helpers/emulator.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { recordingFetch, rejectionOf } from './helpers/recording-fetch.js';

// The admin client pointed at an ArcGIS Online organization (the emulator's): the same webhook operations,
// on hosted feature layers, records addressed by globalId.

const redis = await startRedis(t);

t.test('an Online admin root: tokens from sharing/rest, webhooks of a hosted feature layer by globalId', async (t) => {
  const emulator = await startEmulator(t);
  const receiver = await startReceiver(t, redis);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: `${emulator.url}/geohookOrg/ArcGIS/rest/admin`,
    auth: { username: 'admin', password: 'admin.pass' },
    fetch: recorder.fetch,
  });
  const hookUrl = `${receiver.url}/webhooks/default`;
  const created = await client.webhooks.create('Parcels', { name: 'geohook', hookUrl, signatureKey: TEST_KEY, active: true });
  t.match(created, {
    folderName: '',
    serviceName: 'Parcels',
    serviceType: 'FeatureServer',
    name: 'geohook',
    hookUrl,
    active: true,
    ownerId: 'admin',
  });
  t.match(created.id, /^[0-9a-f-]{36}$/, 'the globalId is the id');
  t.match(recorder.requests[0]!.url, `${emulator.url}/sharing/rest/generateToken`, "the organization's token service");

  t.same(
    (await client.webhooks.listAll('Parcels.FeatureServer')).map((hook) => hook.id),
    [created.id],
    'name or name.FeatureServer',
  );
  t.same(await client.webhooks.list('Parcels'), { webhooks: [created], nextStart: -1 });
  t.same(await client.webhooks.get('Parcels', created.id), created);
  t.match(await client.webhooks.edit('Parcels', created.id, { name: 'renamed', active: false }), {
    id: created.id,
    name: 'renamed',
    active: false,
  });
  await client.webhooks.activateAll('Parcels');
  t.match(await client.webhooks.get('Parcels', created.id), { active: true });
  await client.webhooks.deactivateAll('Parcels');
  t.match(await client.webhooks.get('Parcels', created.id), { active: false });
  await client.webhooks.delete('Parcels', created.id);
  t.same(await client.webhooks.listAll('Parcels'), []);
});

t.test('Online errors: the challenge refused, an unknown service, operations Online does not have, folders', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({
    baseUrl: `${emulator.url}/geohookOrg/ArcGIS/rest/admin/`,
    auth: { username: 'admin', password: 'admin.pass' },
  });
  const refused = await rejectionOf(client.webhooks.create('Parcels', { name: 'x', hookUrl: 'http://127.0.0.1:9/hook' }));
  t.ok(refused instanceof AdminApiError);
  t.match(refused, { serverCode: 400, message: /did not answer the challenge-response check/ });
  t.match(await rejectionOf(client.webhooks.listAll('Zoning')), { serverCode: 404 });
  t.match(await rejectionOf(client.webhooks.notificationStatus('Parcels', 'x')), { code: 'GEOHOOK_ERR_ADMIN_INVALID' });
  t.match(await rejectionOf(client.webhooks.listOrganization()), { code: 'GEOHOOK_ERR_ADMIN_INVALID' });
  t.match(await rejectionOf(client.webhooks.listAll('Hosted/Parcels.FeatureServer')), { code: 'GEOHOOK_ERR_ADMIN_INVALID' });
  t.match(await rejectionOf(client.webhooks.listAll('Tools.GPServer')), { code: 'GEOHOOK_ERR_ADMIN_INVALID' });
});
