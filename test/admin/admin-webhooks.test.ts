import t, { type Test } from 'tap';
import { createAdminClient, type AdminClient } from '../../src/admin/admin-client.js';
import { AdminApiError } from '../../src/errors.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { answerWith, startSink } from '../helpers/http-sink.js';
import { waitFor } from '../helpers/wait.js';
import { recordingFetch, rejectionOf } from './helpers/recording-fetch.js';

const hookUrl = 'http://127.0.0.1:9/webhooks/default';
const GP = 'Tools/Buffer.GPServer';
const FEATURE = 'Hosted/Parcels.FeatureServer';

async function setup(
  t: Test,
  emulatorOptions = {},
): Promise<{ emulator: TestEmulator; client: AdminClient; recorder: ReturnType<typeof recordingFetch> }> {
  const emulator = await startEmulator(t, emulatorOptions);
  const recorder = recordingFetch();
  const client = createAdminClient({
    baseUrl: `${emulator.baseUrl}/`,
    auth: { username: 'admin', password: 'admin.pass' },
    fetch: recorder.fetch,
  });
  return { emulator, client, recorder };
}

t.test('create on a GP service returns the webhook without status, every parameter applied', async (t) => {
  const { emulator, client, recorder } = await setup(t);
  const hook = await client.webhooks.create(GP, {
    name: 'done',
    hookUrl,
    signatureKey: 'k1',
    active: true,
    contentType: 'application/x-www-form-urlencoded',
    payloadFormat: 'pjson',
  });
  t.match(hook, {
    folderName: 'Tools',
    serviceName: 'Buffer',
    serviceType: 'GPServer',
    name: 'done',
    hookUrl,
    signatureKey: 'k1',
    active: true,
    contentType: 'application/x-www-form-urlencoded',
    payloadFormat: 'pjson',
    scheduleInfo: {},
    ownerId: 'admin',
  });
  t.type(hook.id, 'string');
  t.notOk('status' in hook, 'status is stripped');
  const sent = recorder.requests.at(-1)!;
  t.equal(sent.url, `${emulator.baseUrl}/services/Tools/Buffer.GPServer/webhooks/create`, 'the trailing slash of baseUrl is tolerated');
  t.equal(sent.method, 'POST');
  t.equal(sent.contentType, 'application/x-www-form-urlencoded');
  t.equal(sent.form.get('active'), 'true');
  t.equal(sent.form.get('f'), 'json');
});

t.test('create on a feature service sends changeTypes as a comma list and scheduleInfo as JSON', async (t) => {
  const { client, recorder } = await setup(t);
  const scheduleInfo = {
    name: 'every 5 s',
    startAt: 1_700_000_000_000,
    state: 'enabled',
    recurrenceInfo: { interval: 5, frequency: 'second' },
  };
  const hook = await client.webhooks.create(FEATURE, {
    name: 'edits',
    hookUrl,
    changeTypes: ['FeaturesCreated', 'FeaturesDeleted'],
    scheduleInfo,
  });
  t.same(hook.changeTypes, ['FeaturesCreated', 'FeaturesDeleted']);
  t.match(hook.scheduleInfo, { name: 'every 5 s', startAt: 1_700_000_000_000, recurrenceInfo: { interval: 5 } });
  const form = recorder.requests.at(-1)!.form;
  t.equal(form.get('changeTypes'), 'FeaturesCreated,FeaturesDeleted');
  t.same(JSON.parse(form.get('scheduleInfo')!), scheduleInfo);
  t.same((await client.webhooks.create('Parcels.FeatureServer', { name: 's', hookUrl, changeTypes: 'FeaturesEdited' })).changeTypes, [
    'FeaturesEdited',
  ]);
});

t.test('list pages with start and num and reports nextStart', async (t) => {
  const { client } = await setup(t);
  for (const name of ['a', 'b', 'c']) await client.webhooks.create(GP, { name, hookUrl });
  const first = await client.webhooks.list(GP, { start: 1, num: 2 });
  t.same(
    first.webhooks.map((hook) => hook.name),
    ['a', 'b'],
  );
  t.equal(first.nextStart, 3);
  const second = await client.webhooks.list(GP, { start: first.nextStart, num: 2 });
  t.same(
    second.webhooks.map((hook) => hook.name),
    ['c'],
  );
  t.equal(second.nextStart, -1);
  t.equal((await client.webhooks.list(GP)).webhooks.length, 3, 'without a page: the server default');
});

t.test('listAll follows nextStart across pages until -1', async (t) => {
  const { client, recorder } = await setup(t);
  for (let i = 0; i < 30; i += 1) await client.webhooks.create(GP, { name: `h${i}`, hookUrl });
  const before = recorder.requests.length;
  const all = await client.webhooks.listAll(GP);
  t.equal(all.length, 30);
  t.equal(new Set(all.map((hook) => hook.id)).size, 30, 'no webhook twice');
  const pages = recorder.requests.slice(before);
  t.same(
    pages.map((request) => request.form.get('start')),
    ['1', '26'],
    'two pages of 25',
  );
});

t.test('get, edit and delete address one webhook; a deleted one is a 404', async (t) => {
  const { client } = await setup(t);
  const { id } = await client.webhooks.create(GP, { name: 'one', hookUrl });
  t.match(await client.webhooks.get(GP, id), { id, name: 'one', active: false });
  const edited = await client.webhooks.edit(GP, id, { name: 'renamed', active: true });
  t.match(edited, { id, name: 'renamed', active: true, hookUrl });
  t.notOk('status' in edited);
  t.match(await client.webhooks.get(GP, id), { name: 'renamed', active: true });
  t.equal(await client.webhooks.delete(GP, id), undefined);
  const err = await rejectionOf(client.webhooks.get(GP, id));
  t.ok(err instanceof AdminApiError);
  t.match(err, { code: 'GEOHOOK_ERR_ADMIN_API', serverCode: 404 });
});

t.test('activateAll, deactivateAll and deleteAll act on every webhook of the service only', async (t) => {
  const { client } = await setup(t);
  for (const name of ['a', 'b']) await client.webhooks.create(GP, { name, hookUrl });
  const other = await client.webhooks.create(FEATURE, { name: 'other', hookUrl });
  await client.webhooks.activateAll(GP);
  t.same(
    (await client.webhooks.listAll(GP)).map((hook) => hook.active),
    [true, true],
  );
  t.equal((await client.webhooks.get(FEATURE, other.id)).active, false, 'another service is untouched');
  await client.webhooks.deactivateAll(GP);
  t.same(
    (await client.webhooks.listAll(GP)).map((hook) => hook.active),
    [false, false],
  );
  await client.webhooks.deleteAll(GP);
  t.same(await client.webhooks.listAll(GP), []);
  t.equal((await client.webhooks.listAll(FEATURE)).length, 1);
});

t.test('listOrganization lists the webhooks of every service', async (t) => {
  const { client } = await setup(t);
  await client.webhooks.create(GP, { name: 'gp', hookUrl });
  await client.webhooks.create(FEATURE, { name: 'fs', hookUrl });
  t.same((await client.webhooks.listOrganization()).map((hook) => `${hook.serviceName}:${hook.name}`).sort(), ['Buffer:gp', 'Parcels:fs']);
});

t.test('notificationStatus lists the failed deliveries of a webhook', async (t) => {
  const { emulator, client } = await setup(t, { secondsToMs: (seconds: number) => seconds * 5 });
  const sink = await startSink(t, answerWith(500));
  const hook = await client.webhooks.create(GP, { name: 'failing', hookUrl: `${sink.url}/hook`, active: true });
  t.same(await client.webhooks.notificationStatus(GP, hook.id), [], 'nothing failed yet');
  await emulator.control('services/Tools/Buffer.GPServer/jobs', { outcome: 'succeeded' });
  const statuses = await waitFor('the failed delivery in notificationStatus', async () => {
    const listed = await client.webhooks.notificationStatus(GP, hook.id);
    return listed.length > 0 && listed;
  });
  t.equal(statuses.length, 1);
  t.match(statuses[0], { invoked: false, invokedTimestamp: Number });
  t.equal(sink.received.length, 3, 'three attempts made that one failure');
});
