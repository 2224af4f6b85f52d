import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { changeEventsQueueName } from '../../src/changes/change-event.js';
import { changesQueueName } from '../../src/changes/change-queues.js';
import { readChangesStatus } from '../../src/changes/changes-status.js';
import { replayJob } from '../../src/changes/range-jobs.js';
import { defaultCatalog } from '../../src/emulator/catalog.js';
import { consumeChanges } from '../helpers/change-consumer.js';
import { PARCELS } from '../helpers/edits.js';
import { deliveriesEnded, startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { countChanges, setUpParcelsChanges } from '../helpers/parcels-changes.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { square } from '../helpers/square.js';
import { queueDrained, waitFor } from '../helpers/wait.js';

// Each test starts geohook and the emulator and waits for their change events: past tap's 60 s beside the other test files.
t.setTimeout(180_000);

const redis = await startRedis(t);

async function serviceEdits(emulator: TestEmulator, edits: unknown[]): Promise<unknown> {
  const form = new URLSearchParams({ f: 'json', token: await emulator.token(), edits: JSON.stringify(edits) });
  const answer = await fetch(`${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/applyEdits`, {
    method: 'POST',
    body: form,
  });
  return answer.json();
}

t.test('one call of 3 adds, 2 updates, 1 delete and an inspection is 7 change events, one transaction, parents first', async (t) => {
  const { emulator, events, url, authentication, prefix } = await setUpParcelsChanges(t, redis, { CHANGES_TRACK: 'status' });
  const setup = await applyEdits({
    url: `${url}/0`,
    authentication,
    adds: ['A', 'B', 'C'].map((id, index) => ({ attributes: { parcel_id: id, status: 'Open' }, geometry: square(index * 100) as never })),
  });
  t.equal(setup.addResults.length, 3);
  await countChanges(events, 3);
  t.same(
    events.map((event) => [event.type, event.key.objectId]),
    [
      ['change.created', 1],
      ['change.created', 2],
      ['change.created', 3],
    ],
  );

  await serviceEdits(emulator, [
    { id: 1, adds: [{ attributes: { parcel_guid: setup.addResults[0]!.globalId, inspector: 'inspector7', result: 'pass' } }] },
    {
      id: 0,
      adds: ['D', 'E', 'F'].map((id, index) => ({
        attributes: { parcel_id: id, status: 'Pending' },
        geometry: square(1000 + index * 100),
      })),
      updates: [{ attributes: { objectid: 1, status: 'Closed' } }, { attributes: { objectid: 2, owner: 'Ada' } }],
      deletes: [3],
    },
  ]);
  const all = await countChanges(events, 10);
  // The consumer runs handlers concurrently: the order to check is the transaction's.
  const call = all.slice(3).sort((a, b) => a.source.transaction.index - b.source.transaction.index);
  t.equal(call.length, 7, 'seven change events');
  t.same(
    call.map((event) => [event.op, event.layer.id, event.key.objectId]),
    [
      ['c', 0, 4],
      ['c', 0, 5],
      ['c', 0, 6],
      ['c', 1, 1],
      ['u', 0, 1],
      ['u', 0, 2],
      ['d', 0, 3],
    ],
    'creates parents before children, then updates, then deletes',
  );
  const [transaction] = new Set(call.map((event) => event.source.transaction.id));
  t.ok(call.every((event) => event.source.transaction.id === transaction && event.source.transaction.total === 7));
  t.same(
    call.map((event) => event.source.transaction.index),
    [0, 1, 2, 3, 4, 5, 6],
  );
  const closed = call[4]!;
  t.match(closed, {
    type: 'change.updated',
    before: { attributes: { status: 'Open' } },
    changedFields: ['status'],
    geometryChanged: false,
    after: { attributes: { objectid: 1, status: 'Closed', parcel_id: 'A' } },
    editor: { user: 'admin', at: String },
    source: { origin: 'webhook', serverGens: [Number, Number] },
    service: { folderName: 'Hosted', serviceName: 'Parcels', serviceType: 'FeatureServer', url },
  });
  t.same(call[5]!.changedFields, [], 'owner is not tracked: no tracked field changed');
  t.match(call[6], {
    type: 'change.deleted',
    after: null,
    key: { objectId: 3, globalId: setup.addResults[2]!.globalId },
    before: { attributes: { status: 'Open' } },
  });
  t.same(call[0]!.before, null, 'a create has nothing before');
  t.equal(new Set(all.map((event) => event.id)).size, all.length, 'every id once');

  await applyEdits({ url: `${url}/0`, authentication, updates: [{ attributes: { objectid: 2 }, geometry: square(555, 555) as never }] });
  const [moved] = (await countChanges(events, 11)).slice(10);
  t.match(
    moved,
    { type: 'change.updated', key: { objectId: 2 }, changedFields: [], geometryChanged: true },
    'a moved polygon: no field changed, the geometry did',
  );

  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  const status = await waitFor('every range released', async () => {
    const read = await readChangesStatus(raw, prefix);
    return read.services[0]?.scopes[0]?.pending === undefined && read;
  });
  const [scope] = status.services[0]!.scopes;
  t.match(
    status,
    { services: [{ service: PARCELS, hook: 'default', previousValues: 6 }] },
    'A, B, D, E, F and the inspection are kept; C was deleted',
  );
  t.equal(scope!.resolvedGen, scope!.watermark, 'resolved up to the watermark');
  t.notOk('lastError' in scope!);
  t.equal(status.queue.waiting! + status.queue.completed! + status.queue.active!, 11);
});

t.test('a BigInteger beyond 2^53 arrives as its exact decimal string', async (t) => {
  const { emulator, events } = await setUpParcelsChanges(t, redis);
  const form = new URLSearchParams({
    f: 'json',
    token: await emulator.token(),
    adds: '[{"attributes":{"parcel_id":"P-1","assessed_value":9007199254740993}}]',
  });
  await fetch(`${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0/applyEdits`, { method: 'POST', body: form });
  const [created] = await countChanges(events, 1);
  t.equal(created!.after!.attributes.assessed_value, '9007199254740993');
});

t.test('edits whose deliveries were lost arrive once, as backfilled, with the delivered ones around them, and none twice', async (t) => {
  const { emulator, geohook, events, prefix } = await setUpParcelsChanges(t, redis);
  const edit = (lose: boolean) =>
    emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
      edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P' } }] }],
      lose,
    });
  await edit(false);
  await countChanges(events, 1);
  const loses = [true, true, false, true, false];
  for (const lose of loses) await edit(lose);
  await countChanges(events, 6);
  // The backfill fills the gaps too (a second later, the gap delay). Once it has, and every delivery ended, a later
  // edit's range is claimed after anything they could still move, and its event is written after any event of theirs.
  await deliveriesEnded(emulator);
  await queueDrained(geohook.server.app.eventQueue.backfillQueue(), 'the gaps filled');
  await edit(false);
  await waitFor("the later edit's event", () => events.some((event) => event.key.objectId === 7));
  const raw = new Redis(redis.url);
  const changes = new Queue(changeEventsQueueName, { connection: raw, prefix });
  t.teardown(async () => {
    await changes.close();
    raw.disconnect();
  });
  await queueDrained(changes, 'every change event consumed');
  t.equal(events.length, 7, 'nothing twice: seven edits, seven events');
  t.equal(new Set(events.map((event) => event.id)).size, 7, 'no id twice');
  t.same(
    events.map((event) => [event.type, event.key.objectId, event.source.origin]).sort((a, b) => Number(a[1]) - Number(b[1])),
    [false, ...loses, false].map((lost, index) => ['change.created', index + 1, lost ? 'backfill' : 'webhook']),
    'a lost edit says backfill, a delivered one webhook',
  );
});

t.test('ArcGIS Online: each layer is followed on its own, and a delete named by its GlobalID says its object id', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const geohook = await startGeohook(t, redis, {
    ...registrationEnv(emulator, ['Parcels.FeatureServer'], prefix),
    ADMIN_URL: `${emulator.url}/geohookOrg/ArcGIS/rest/admin`,
    CHANGES: 'Parcels.FeatureServer',
    CHANGES_TRACK: '*',
  });
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const events = await consumeChanges(t, redis.url, prefix);
  const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
    edits: [
      { id: 0, adds: [{ attributes: { parcel_id: 'P-1', status: 'Open' } }] },
      { id: 1, adds: [{ attributes: { inspector: 'a' } }] },
    ],
  });
  const created = await countChanges(events, 2);
  t.same(created.map((event) => event.layer.id).sort(), [0, 1], 'one event per layer, each from its own range');
  t.match(
    created.find((event) => event.layer.id === 0),
    { service: { serviceName: 'Parcels', orgId: 'geohookOrg' } },
  );
  const globalId = (body.results as { addResults: { globalId: string }[] }[])[0]!.addResults[0]!.globalId;
  await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', { edits: [{ id: 0, deletes: [1] }] });
  const [deleted] = (await countChanges(events, 3)).slice(2);
  t.match(deleted, {
    type: 'change.deleted',
    key: { objectId: 1, globalId },
    before: { attributes: { parcel_id: 'P-1', status: 'Open' } },
  });
});

t.test('tokens that live 2 seconds: every range resolves, with a token renewed about once per lifetime, not per request', async (t) => {
  const emulator = await startEmulator(t, { tokenSeconds: 2 });
  const prefix = uniquePrefix();
  const geohook = await startGeohook(t, redis, { ...registrationEnv(emulator, [PARCELS], prefix), CHANGES: PARCELS });
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const events = await consumeChanges(t, redis.url, prefix);
  const startedAt = Date.now();
  const tokensBefore = emulator.requests.filter((line) => line.includes('generateToken')).length;
  for (let n = 0; n < 12; n += 1) {
    await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
      edits: [{ id: 0, adds: [{ attributes: { parcel_id: `P-${n}` } }] }],
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await countChanges(events, 12);
  const seconds = (Date.now() - startedAt) / 1000;
  const tokens = emulator.requests.filter((line) => line.includes('generateToken')).length - tokensBefore;
  const restCalls = emulator.requests.filter((line) => line.includes('/FeatureServer')).length;
  t.ok(tokens >= 1 && tokens <= Math.ceil(seconds / 2) + 3, `${tokens} tokens in ${seconds.toFixed(1)} s for ${restCalls} requests`);
  t.same(new Set(events.map((event) => event.key.objectId)).size, 12);
});

t.test('a field added to a layer is a change.schema event, before the rows that fill it', async (t) => {
  const { emulator, events } = await setUpParcelsChanges(t, redis);
  const add = (attributes: Record<string, unknown>) =>
    emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', { edits: [{ id: 0, adds: [{ attributes }] }] });
  await add({ parcel_id: 'P-1' });
  await countChanges(events, 1);
  const added = await emulator.admin('../rest/admin/services/Hosted/Parcels/FeatureServer/0/addToDefinition', {
    addToDefinition: JSON.stringify({ fields: [{ name: 'zoning', type: 'esriFieldTypeString', length: 8 }] }),
  });
  t.same(added, { success: true });
  await add({ parcel_id: 'P-2', zoning: 'R1' });
  const [schema, row] = (await countChanges(events, 3)).slice(1);
  t.match(schema, { type: 'change.schema', layer: { id: 0, name: 'Parcels' }, schema: { added: ['zoning'], removed: [] }, after: null });
  t.notOk('op' in schema!);
  t.match(row, { type: 'change.created', after: { attributes: { parcel_id: 'P-2', zoning: 'R1' } } });
});

t.test('a server that answers ids only (10.6.1-era): rows read with query, flagged as the current state', async (t) => {
  const parcels = defaultCatalog.find((service) => service.serviceName === 'Parcels')!;
  const emulator = await startEmulator(t, {
    catalog: [...defaultCatalog, { ...parcels, serviceName: 'OldParcels', extractChanges: 'enterprise-10.6.1' }],
  });
  const prefix = uniquePrefix();
  const service = 'Hosted/OldParcels.FeatureServer';
  const geohook = await startGeohook(t, redis, { ...registrationEnv(emulator, [service], prefix), CHANGES: service });
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const events = await consumeChanges(t, redis.url, prefix);
  await emulator.control(`services/${service}/applyEdits`, {
    edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P-1', status: 'Open' } }, { attributes: { parcel_id: 'P-2' } }] }],
  });
  const created = await countChanges(events, 2);
  t.match(created, [
    { type: 'change.created', key: { objectId: 1 }, after: { attributes: { parcel_id: 'P-1', status: 'Open' }, asOf: 'current' } },
    { type: 'change.created', key: { objectId: 2 }, after: { asOf: 'current' } },
  ]);
  await emulator.control(`services/${service}/applyEdits`, { edits: [{ id: 0, deletes: [2] }] });
  const [deleted] = (await countChanges(events, 3)).slice(2);
  t.match(deleted, { type: 'change.deleted', key: { objectId: 2 }, after: null });
});

t.test('a replayed range is resolved again with the same ids: consumers see nothing new', async (t) => {
  const { emulator, events, prefix } = await setUpParcelsChanges(t, redis);
  await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
    edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'P-1' } }] }],
  });
  const [created] = await countChanges(events, 1);
  const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
  const queue = new Queue(changesQueueName, { connection: raw, prefix });
  t.teardown(async () => {
    await queue.close();
    raw.disconnect();
  });
  const [from, to] = created!.source.serverGens;
  const job = replayJob({ scope: `default ${PARCELS}`, from, to, hook: 'default', serviceUrl: created!.service.url });
  const queued = await queue.add(job.name, job.data, job.opts);
  const done = await waitFor('the replay resolved', async () => {
    const state = await queued.getState();
    return state === 'completed' && (await Job.fromId(queue, queued.id!))!;
  });
  t.equal(done.returnvalue, 0, 'no event added: each had been written');
  t.equal(events.length, 1);
});
