import t from 'tap';
import { startEmulator, type TestEmulator } from '../../helpers/emulator.js';
import { answerWith, startSink } from '../../helpers/http-sink.js';
import { waitFor } from '../../helpers/wait.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PARCELS = 'arcgis/rest/services/Hosted/Parcels/FeatureServer';

async function post(emulator: TestEmulator, path: string, params: Record<string, string>): Promise<Json> {
  return (await (
    await fetch(`${emulator.url}/${path}`, { method: 'POST', body: new URLSearchParams({ f: 'json', ...params }) })
  ).json()) as Json;
}

async function newToken(emulator: TestEmulator): Promise<string> {
  return (await post(emulator, 'arcgis/sharing/rest/generateToken', { username: 'admin', password: 'admin.pass' })).token as string;
}

t.test('after the expire control every token answers 498 on query, applyEdits and extractChanges; a new one works', async (t) => {
  const emulator = await startEmulator(t);
  const token = await newToken(emulator);
  const calls = (value: string) => [
    post(emulator, `${PARCELS}/0/query`, { token: value, where: '1=1' }),
    post(emulator, `${PARCELS}/0/applyEdits`, { token: value, adds: '[{"attributes":{"parcel_id":"P-1"}}]' }),
    post(emulator, `${PARCELS}/extractChanges`, { token: value, serverGens: '[0,1]' }),
  ];
  for (const answer of await Promise.all(calls(token))) t.notOk('error' in answer, 'valid at first');
  t.equal((await emulator.control('tokens/expire')).status, 200);
  for (const answer of await Promise.all(calls(token))) t.match(answer, { error: { code: 498, message: 'Invalid token.' } });
  const fresh = await newToken(emulator);
  for (const answer of await Promise.all(calls(fresh))) t.notOk('error' in answer, 'a new token works again');
});

t.test('tokenSeconds (EMULATOR_TOKEN_SECONDS) sets the lifetime of new tokens, whatever expiration asks', async (t) => {
  const emulator = await startEmulator(t, { tokenSeconds: 5 });
  const issued = await post(emulator, 'arcgis/sharing/rest/generateToken', { username: 'admin', password: 'admin.pass', expiration: '60' });
  const lifetime = (issued.expires as number) - Date.now();
  t.ok(lifetime > 3_000 && lifetime <= 5_000, `about 5 s: ${lifetime} ms`);
  await emulator.control('clock', { now: (issued.expires as number) + 1 });
  t.match(await post(emulator, `${PARCELS}/0/query`, { token: issued.token as string, where: '1=1' }), { error: { code: 498 } });
});

t.test("addToDefinition and deleteFromDefinition change a layer's fields and fire LayerSchemaChanged", async (t) => {
  const emulator = await startEmulator(t);
  const sink = await startSink(t, answerWith(200));
  await emulator.admin('services/Hosted/Parcels.FeatureServer/webhooks/create', {
    name: 'schema',
    hookUrl: sink.url,
    changeTypes: 'LayerSchemaChanged',
    active: 'true',
  });
  const token = await emulator.token();
  await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
    edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P-1', owner: 'Ada' } }] }],
  });
  const admin = `arcgis/rest/admin/services/Hosted/Parcels/FeatureServer/0`;
  const added = await post(emulator, `${admin}/addToDefinition`, {
    token,
    addToDefinition: JSON.stringify({ fields: [{ name: 'zoning', type: 'esriFieldTypeString', length: 8 }] }),
  });
  t.same(added, { success: true });
  const fieldNames = async () => ((await post(emulator, `${PARCELS}/0`, { token })).fields as Json[]).map((field) => field.name);
  t.ok((await fieldNames()).includes('zoning'));
  const row = async () => (await post(emulator, `${PARCELS}/0/query`, { token, where: '1=1', outFields: '*' })).features[0].attributes;
  t.match(await row(), { zoning: null, owner: 'Ada' }, 'a feature has the new field, null');
  await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
    edits: [{ id: 0, updates: [{ attributes: { objectid: 1, zoning: 'R1' } }] }],
  });
  t.match(await row(), { zoning: 'R1' }, 'the next edit fills it');
  t.same(
    await post(emulator, `${admin}/deleteFromDefinition`, { token, deleteFromDefinition: JSON.stringify({ fields: [{ name: 'owner' }] }) }),
    { success: true },
  );
  t.notOk((await fieldNames()).includes('owner'));
  t.notOk('owner' in (await row()));
  t.match(
    await post(emulator, `${admin}/deleteFromDefinition`, {
      token,
      deleteFromDefinition: JSON.stringify({ fields: [{ name: 'objectid' }] }),
    }),
    { status: 'error' },
  );
  t.match(
    await post(emulator, `${admin}/addToDefinition`, {
      token,
      addToDefinition: JSON.stringify({ fields: [{ name: 'zoning', type: 'esriFieldTypeString' }] }),
    }),
    { status: 'error', messages: [/already exists/] },
  );
  const deliveries = await waitFor('two deliveries', () => sink.received.length >= 2 && sink.received);
  t.same(
    deliveries.map((delivery) => JSON.parse(delivery.body.toString()).events.map((event: Json) => event.eventType)),
    [['LayerSchemaChanged'], ['LayerSchemaChanged']],
  );
});
