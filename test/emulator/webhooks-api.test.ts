import t from 'tap';
import { startEmulator } from '../helpers/emulator.js';

const hookUrl = 'http://127.0.0.1:8080/webhooks/default';

t.test('create on an asynchronous GP service returns the webhook with the defaults and status success', async (t) => {
  const emulator = await startEmulator(t);
  const created = await emulator.admin('services/Tools/Buffer.GPServer/webhooks/create', { name: 'done', hookUrl });
  t.match(created, {
    folderName: 'Tools',
    serviceName: 'Buffer',
    serviceType: 'GPServer',
    name: 'done',
    hookUrl,
    active: false,
    contentType: 'application/json',
    payloadFormat: 'json',
    changeTypes: ['*'],
    signatureKey: '',
    scheduleInfo: {},
    ownerId: 'admin',
    modifiedId: 'admin',
    status: 'success',
  });
  t.match(created.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  t.equal(created.created, created.modified);
});

t.test('a feature service webhook gets a default schedule and accepts changeTypes as a string, a comma list or a JSON array', async (t) => {
  const emulator = await startEmulator(t);
  const create = (changeTypes: string) =>
    emulator.admin('services/Parcels.FeatureServer/webhooks/create', { name: 'edits', hookUrl, changeTypes });
  t.same((await create('FeaturesCreated')).changeTypes, ['FeaturesCreated']);
  t.same((await create('featurescreated, FeaturesDeleted')).changeTypes, ['FeaturesCreated', 'FeaturesDeleted']);
  const fromJson = await create('["AttachmentsCreated","LayerSchemaChanged"]');
  t.same(fromJson.changeTypes, ['AttachmentsCreated', 'LayerSchemaChanged']);
  t.match(fromJson.scheduleInfo, { name: '', state: 'enabled', startAt: Number, recurrenceInfo: { interval: 20, frequency: 'second' } });
  const invalid = await create('FeaturesMoved');
  t.match(invalid, { status: 'error', code: 400 });
  t.match((invalid.messages as string[])[0], /changeTypes.*'FeaturesMoved' is not one of \*, FeaturesCreated/);
});

t.test('the prerequisites of the spec are enforced, each with its reason', async (t) => {
  const emulator = await startEmulator(t);
  const attempt = (service: string) => emulator.admin(`services/${service}/webhooks/create`, { name: 'x', hookUrl });
  t.match(await attempt('Tools/Geocode.GPServer'), { code: 400, messages: [/synchronous/] });
  t.match(await attempt('Hosted/Roads.FeatureServer'), { code: 400, messages: [/change tracking/] });
  t.match(await attempt('Hosted/Zoning.FeatureServer'), { code: 400, messages: [/branch versioned/] });
  t.match(await attempt('Basemaps/World.MapServer'), { code: 400, messages: [/GPServer and FeatureServer/] });
  t.match(await attempt('Hosted/Nowhere.FeatureServer'), { code: 404, messages: [/does not exist/] });
});

t.test('updateDefinition enables change tracking on Roads, which then takes webhooks; sync on refuses them', async (t) => {
  const emulator = await startEmulator(t);
  const enable = await emulator.admin('services/Hosted/Roads/FeatureServer/updateDefinition', {
    updateDefinition: JSON.stringify({ capabilities: 'Create,Delete,Query,Update,Editing,ChangeTracking', syncEnabled: false }),
  });
  t.same(enable, { status: 'success' });
  t.match(await emulator.admin('services/Hosted/Roads.FeatureServer/webhooks/create', { name: 'r', hookUrl }), { status: 'success' });
  await emulator.admin('services/Roads/FeatureServer/updateDefinition', { updateDefinition: '{"syncEnabled":true}' });
  t.match(await emulator.admin('services/Roads.FeatureServer/webhooks/create', { name: 'r', hookUrl }), {
    code: 400,
    messages: [/sync enabled/],
  });
  await emulator.admin('services/Roads/FeatureServer/updateDefinition', {
    updateDefinition: '{"syncEnabled":false,"capabilities":"Query"}',
  });
  t.match(await emulator.admin('services/Roads.FeatureServer/webhooks/create', { name: 'r', hookUrl }), {
    code: 400,
    messages: [/editing capability/],
  });
  t.match(await emulator.admin('services/Roads/FeatureServer/updateDefinition', { updateDefinition: '{not json' }), {
    code: 400,
    messages: [/updateDefinition.*valid JSON/],
  });
  t.match(await emulator.admin('services/Roads/FeatureServer/updateDefinition', { updateDefinition: '{"syncEnabled":"yes"}' }), {
    code: 400,
  });
  t.match(await emulator.admin('services/Buffer/FeatureServer/updateDefinition', { updateDefinition: '{}' }), { code: 404 });
});

t.test('create validates every parameter and names it', async (t) => {
  const emulator = await startEmulator(t);
  const create = (params: Record<string, string>) =>
    emulator.admin('services/Buffer.GPServer/webhooks/create', { name: 'n', hookUrl, ...params });
  t.match(await emulator.admin('services/Buffer.GPServer/webhooks/create', { hookUrl }), {
    code: 400,
    messages: ["Missing required parameter 'name'."],
  });
  t.match(await emulator.admin('services/Buffer.GPServer/webhooks/create', { name: 'n' }), {
    code: 400,
    messages: ["Missing required parameter 'hookUrl'."],
  });
  t.match(await create({ hookUrl: 'ftp://x' }), { code: 400, messages: [/hookUrl.*http or https URL/] });
  t.match(await create({ contentType: 'text/xml' }), {
    code: 400,
    messages: [/contentType.*application\/json, application\/x-www-form-urlencoded/],
  });
  t.match(await create({ payloadFormat: 'xml' }), { code: 400, messages: [/payloadFormat.*json, pjson/] });
  t.match(await create({ active: 'maybe' }), { code: 400, messages: [/active.*true or false/] });
  t.match(await create({ active: 'true', contentType: 'application/x-www-form-urlencoded', payloadFormat: 'pjson', signatureKey: 'k' }), {
    active: true,
    contentType: 'application/x-www-form-urlencoded',
    payloadFormat: 'pjson',
    signatureKey: 'k',
  });
});

t.test('list, get, edit, delete, activateAll, deactivateAll and deleteAll manage a service webhooks', async (t) => {
  const emulator = await startEmulator(t);
  const base = 'services/Tools/Buffer.GPServer/webhooks';
  const ids: string[] = [];
  for (const name of ['a', 'b', 'c']) ids.push((await emulator.admin(`${base}/create`, { name, hookUrl })).id as string);

  const page = await emulator.admin(base, { start: '1', num: '2' });
  t.equal((page.webhooks as unknown[]).length, 2);
  t.equal(page.nextStart, 3);
  t.equal((await emulator.admin(base, { start: '3', num: '2' })).nextStart, -1);

  t.match(await emulator.admin(`${base}/${ids[0]}`), { id: ids[0], name: 'a' });
  const edited = await emulator.admin(`${base}/${ids[0]}/edit`, { name: 'renamed', active: 'true' }, 'orgadmin');
  t.match(edited, { name: 'renamed', active: true, hookUrl, modifiedId: 'orgadmin', ownerId: 'admin', status: 'success' });

  t.same(await emulator.admin(`${base}/activateAll`), { status: 'success' });
  t.ok(((await emulator.admin(base)).webhooks as { active: boolean }[]).every((hook) => hook.active));
  t.same(await emulator.admin(`${base}/deactivateAll`), { status: 'success' });
  t.ok(((await emulator.admin(base)).webhooks as { active: boolean }[]).every((hook) => !hook.active));

  t.same(await emulator.admin(`${base}/${ids[1]}/delete`), { status: 'success' });
  t.match(await emulator.admin(`${base}/${ids[1]}`), { status: 'error', code: 404 });
  t.match(await emulator.admin(`${base}/${ids[1]}/delete`), { status: 'error', code: 404 });
  t.equal(((await emulator.admin('services/webhooks')).webhooks as unknown[]).length, 2, 'the org-wide list');
  t.same(await emulator.admin(`${base}/deleteAll`), { status: 'success' });
  t.same((await emulator.admin(base)).webhooks, []);
});

t.test('an unknown webhook id is a 404 in the admin shape', async (t) => {
  const emulator = await startEmulator(t);
  t.same(await emulator.admin('services/Buffer.GPServer/webhooks/no-such-id'), {
    status: 'error',
    messages: ["Webhook 'no-such-id' does not exist on service 'Buffer.GPServer'."],
    code: 404,
  });
});

t.test('f=pjson answers pretty JSON and f=json compact JSON', async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  const pretty = await (await fetch(`${emulator.baseUrl}/services/webhooks?f=pjson&token=${token}`)).text();
  t.equal(pretty, '{\n  "webhooks": []\n}');
  const compact = await (await fetch(`${emulator.baseUrl}/services/webhooks?f=json&token=${token}`)).text();
  t.equal(compact, '{"webhooks":[]}');
  const bad = await (await fetch(`${emulator.baseUrl}/services/webhooks?f=xml&token=${token}`)).json();
  t.match(bad, { status: 'error', code: 400, messages: [/'f'.*json or pjson/] });
});

t.test('a non-hosted feature service takes webhooks only with nonversioned data and archiving', async (t) => {
  const base = {
    folderName: 'Enterprise',
    type: 'FeatureServer',
    hosted: false,
    capabilities: 'Query,Editing,ChangeTracking',
    syncEnabled: false,
  };
  const emulator = await startEmulator(t, {
    catalog: [
      { ...base, serviceName: 'Versioned', versioned: true, archiving: true },
      { ...base, serviceName: 'NoArchive', versioned: false, archiving: false },
      { ...base, serviceName: 'Good', versioned: false, archiving: true },
    ],
  });
  const attempt = (name: string) => emulator.admin(`services/Enterprise/${name}.FeatureServer/webhooks/create`, { name: 'x', hookUrl });
  t.match(await attempt('Versioned'), { code: 400, messages: [/not hosted: its data must be nonversioned with archiving enabled/] });
  t.match(await attempt('NoArchive'), { code: 400, messages: [/not hosted: its data must be nonversioned with archiving enabled/] });
  t.match(await attempt('Good'), { status: 'success' });
});

t.test('a malformed scheduleInfo is a 400 naming the parameter', async (t) => {
  const emulator = await startEmulator(t);
  const create = (scheduleInfo: string) =>
    emulator.admin('services/Parcels.FeatureServer/webhooks/create', { name: 's', hookUrl, scheduleInfo });
  t.match(await create('{broken'), { code: 400, messages: [/'scheduleInfo': must be valid JSON/] });
  t.match(await create('{"recurrenceInfo":{"interval":0}}'), { code: 400, messages: [/'scheduleInfo': must be an object/] });
  t.match(await create('{"name":"nightly","startAt":5,"recurrenceInfo":{"interval":60,"frequency":"second"}}'), {
    scheduleInfo: { name: 'nightly', state: 'enabled', startAt: 5, recurrenceInfo: { interval: 60, frequency: 'second' } },
  });
});
