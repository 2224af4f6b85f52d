import t from 'tap';
import { createAdminClient } from '../../src/admin/admin-client.js';
import { AdminApiError } from '../../src/errors.js';
import { startEmulator } from '../helpers/emulator.js';
import { recordingFetch, rejectionOf } from './helpers/recording-fetch.js';

const hookUrl = 'http://127.0.0.1:9/webhooks/default';
const names = (services: { folderName: string; serviceName: string; type: string }[]): string[] =>
  services.map((service) => `${service.folderName}/${service.serviceName}.${service.type}`).sort();

t.test('findServices without filters lists every service record', async (t) => {
  const emulator = await startEmulator(t);
  const client = createAdminClient({ baseUrl: emulator.baseUrl, auth: { username: 'admin', password: 'admin.pass' } });
  const all = await client.findServices();
  t.equal(all.length, 6);
  t.match(all[0], { id: String, serviceName: String, type: String, folderName: String, provider: String, configuredState: 'STARTED' });
});

t.test('findServices maps each filter to its parameter', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'admin', password: 'admin.pass' },
    fetch: recorder.fetch,
  });
  const sent = (): Record<string, string> => {
    const form = recorder.requests.at(-1)!.form;
    return Object.fromEntries([...form].filter(([name]) => name.startsWith('filter')));
  };
  t.same(names(await client.findServices({ folderName: 'Hosted' })), [
    'Hosted/Parcels.FeatureServer',
    'Hosted/Roads.FeatureServer',
    'Hosted/Zoning.FeatureServer',
  ]);
  t.same(sent(), { filterFolderName: 'Hosted' });
  t.same(names(await client.findServices({ serviceName: 'Buffer' })), ['Tools/Buffer.GPServer']);
  t.same(sent(), { filterServiceName: 'Buffer' });
  t.same(names(await client.findServices({ serviceType: 'MapServer' })), ['Basemaps/World.MapServer']);
  t.same(sent(), { filterServiceType: 'MapServer' });
  const parcels = (await client.findServices({ serviceName: 'Parcels' }))[0]!;
  t.same(names(await client.findServices({ serviceId: parcels.id })), ['Hosted/Parcels.FeatureServer']);
  t.same(sent(), { filterServiceId: parcels.id });
  t.same(names(await client.findServices({ provider: 'SDS' })), [
    'Basemaps/World.MapServer',
    'Hosted/Parcels.FeatureServer',
    'Hosted/Roads.FeatureServer',
    'Hosted/Zoning.FeatureServer',
  ]);
  t.same(sent(), { filterServiceProvider: 'SDS' });
  t.same(
    names(await client.findServices({ folderName: 'Tools', serviceType: 'GPServer', serviceName: 'Geocode' })),
    ['Tools/Geocode.GPServer'],
    'filters combine',
  );
});

t.test('an unknown findServices filter is refused before any request', async (t) => {
  const recorder = recordingFetch([new Error('no request may be made')]);
  const client = createAdminClient({ baseUrl: 'http://127.0.0.1:9/arcgis/admin', fetch: recorder.fetch });
  await t.rejects(client.findServices({ folder: 'Hosted' } as never), {
    code: 'GEOHOOK_ERR_ADMIN_INVALID',
    message: /filters\.folder: unknown filter, must be one of folderName/,
  });
  t.equal(recorder.requests.length, 0);
});

t.test('updateDefinition enabling change tracking makes Roads take a webhook', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'admin', password: 'admin.pass' },
    fetch: recorder.fetch,
  });
  const refused = await rejectionOf(client.webhooks.create('Hosted/Roads.FeatureServer', { name: 'roads', hookUrl }));
  t.ok(refused instanceof AdminApiError);
  t.match(refused, { serverCode: 400, messages: [/change tracking/] });
  const definition = { capabilities: 'Create,Delete,Query,Update,Editing,ChangeTracking', syncEnabled: false };
  t.equal(await client.updateDefinition('Hosted/Roads.FeatureServer', definition), undefined);
  const request = recorder.requests.at(-1)!;
  t.equal(request.url, `${emulator.baseUrl}/services/Hosted/Roads/FeatureServer/updateDefinition`);
  t.same(JSON.parse(request.form.get('updateDefinition')!), definition);
  t.match(await client.webhooks.create('Hosted/Roads.FeatureServer', { name: 'roads', hookUrl }), { serviceName: 'Roads', name: 'roads' });
});

t.test('updateDefinition without a folder posts to services/<name>/FeatureServer/updateDefinition', async (t) => {
  const emulator = await startEmulator(t);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: emulator.baseUrl,
    auth: { username: 'admin', password: 'admin.pass' },
    fetch: recorder.fetch,
  });
  await client.updateDefinition('Roads.FeatureServer', { capabilities: 'Query,Editing,ChangeTracking', syncEnabled: true });
  t.equal(recorder.requests.at(-1)!.url, `${emulator.baseUrl}/services/Roads/FeatureServer/updateDefinition`);
  await t.rejects(
    client.webhooks.create('Roads.FeatureServer', { name: 'r', hookUrl }),
    { serverCode: 400, message: /sync enabled/ },
    'the server applied it',
  );
  await t.rejects(client.updateDefinition('Tools/Buffer.GPServer', {}), { code: 'GEOHOOK_ERR_ADMIN_INVALID' });
});
