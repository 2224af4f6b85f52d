import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import { createServiceSession } from '../../src/arcgis-request/service-session.js';
import { changeEventsQueueName } from '../../src/changes/change-event.js';
import { ChangeWriter } from '../../src/changes/change-writer.js';
import { PreviousValuesStore } from '../../src/changes/previous-values.js';
import { snapshotService } from '../../src/changes/snapshot.js';
import { defaultCatalog } from '../../src/emulator/catalog.js';
import { consumeChanges } from '../helpers/change-consumer.js';
import { PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { countChanges, setUpParcelsChanges } from '../helpers/parcels-changes.js';
import { configFile, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { square } from '../helpers/square.js';
import { waitFor } from '../helpers/wait.js';

// Each test starts geohook and the emulator and waits for their change events: past tap's 60 s beside the other test files.
t.setTimeout(180_000);

const redis = await startRedis(t);

t.test(
  'a snapshot reads every row as change.read (written 500 at a time, numbered in one transaction) and seeds the previous values; updates then say what changed',
  async (t) => {
    const emulator = await startEmulator(t);
    await emulator.control('services/Hosted/Parcels.FeatureServer/bulk', { layerId: 0, count: 1200 });
    const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
      edits: [{ id: 1, adds: [{ attributes: { inspector: 'a' } }] }],
    });
    t.type(body.serverGen, 'number');
    const prefix = uniquePrefix();
    const geohook = await startGeohook(t, redis, {
      ...registrationEnv(emulator, [PARCELS], prefix),
      CHANGES: PARCELS,
      CHANGES_TRACK: 'status',
    });
    await waitFor('registered', async () => (await geohook.readyz()).status === 200);
    const events = await consumeChanges(t, redis.url, prefix);
    const raw = new Redis(redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue(changeEventsQueueName, { connection: raw, prefix });
    t.teardown(async () => {
      await queue.close();
      raw.disconnect();
    });
    const serviceUrl = new URL(`${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`);
    const result = await snapshotService({
      connection: raw,
      prefix,
      hook: 'default',
      service: PARCELS,
      serviceUrl,
      session: createServiceSession({ trusted: trustedUrls([`${emulator.url}/arcgis/`]), auth: { token: await emulator.token() } }),
      track: ['status'],
      writer: new ChangeWriter(raw, { queue, prefix, dedupMs: 60_000 }),
      previous: new PreviousValuesStore(raw),
      online: false,
    });
    t.match(result, { events: 1201, added: 1201 });
    const read = await countChanges(events, 1201);
    t.ok(read.every((event) => event.type === 'change.read' && event.op === 'r' && event.source.origin === 'snapshot'));
    t.same(
      read.filter((event) => event.layer.id === 1).map((event) => event.source.transaction?.index),
      [1200],
      'parents first: the inspection comes after the 1,200 parcels',
    );
    t.same(
      read.map((event) => [event.source.transaction?.index, event.source.transaction?.total]).sort((a, b) => a[0]! - b[0]!),
      read.map((_event, index) => [index, 1201]),
      'one transaction across the batches: each event an index of its own, all the total',
    );
    const status = (read.find((event) => event.key.objectId === 5)!.after!.attributes.status as string) ?? null;
    await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
      edits: [{ id: 0, updates: [{ attributes: { objectid: 5, status: status === 'Closed' ? 'Open' : 'Closed' } }] }],
    });
    const [updated] = (await countChanges(events, 1202)).slice(1201);
    t.match(updated, { type: 'change.updated', key: { objectId: 5 }, before: { attributes: { status } }, changedFields: ['status'] });
  },
);

t.test("GEOHOOK_CONFIG's changes section: a service's own tracked fields and layers", async (t) => {
  const config = configFile(t, { changes: { [PARCELS]: { track: ['owner'], layers: [0] } } });
  const { emulator, events } = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: config, CHANGES_TRACK: 'status' });
  const edit = (edits: unknown) => emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', { edits });
  await edit([
    { id: 0, adds: [{ attributes: { parcel_id: 'P-1', owner: 'Ada', status: 'Open' } }] },
    { id: 1, adds: [{ attributes: { inspector: 'a' } }] },
  ]);
  const [created] = await countChanges(events, 1);
  t.equal(created!.layer.id, 0, 'the inspection on table 1 is not followed');
  await edit([{ id: 0, updates: [{ attributes: { objectid: 1, owner: 'Grace', status: 'Closed' } }] }]);
  const [updated] = (await countChanges(events, 2)).slice(1);
  t.match(updated, { before: { attributes: { owner: 'Ada' } }, changedFields: ['owner'] }, "the service's own track, not CHANGES_TRACK");
  t.equal(events.length, 2);
});

t.test('filters: where and within, pushed down to extractChanges, or evaluated by geohook on a server that cannot', async (t) => {
  const parcels = defaultCatalog.find((service) => service.serviceName === 'Parcels')!;
  const emulator = await startEmulator(t, {
    catalog: [...defaultCatalog, { ...parcels, serviceName: 'OldParcels', extractChanges: 'enterprise-10.6.1' }],
  });
  for (const service of ['Hosted/Parcels.FeatureServer', 'Hosted/OldParcels.FeatureServer']) {
    const prefix = uniquePrefix();
    const filters = {
      where: "status = 'Closed'",
      within: { xmin: -10, ymin: -10, xmax: 500, ymax: 500, spatialReference: { wkid: 3857 } },
    };
    const geohook = await startGeohook(t, redis, {
      ...registrationEnv(emulator, [service], prefix),
      GEOHOOK_CONFIG: configFile(t, { changes: { [service]: filters } }),
    });
    await waitFor('registered', async () => (await geohook.readyz()).status === 200);
    const events = await consumeChanges(t, redis.url, prefix);
    const edit = (edits: unknown) => emulator.control(`services/${service}/applyEdits`, { edits });
    await edit([
      {
        id: 0,
        adds: [
          { attributes: { parcel_id: 'P-1', status: 'Closed' }, geometry: square(0) },
          { attributes: { parcel_id: 'P-2', status: 'Open' }, geometry: square(100) },
          { attributes: { parcel_id: 'P-3', status: 'Closed' }, geometry: square(1000) },
        ],
      },
      { id: 1, adds: [{ attributes: { inspector: 'inspector7' } }] },
    ]);
    const first = await countChanges(events, 2);
    // A later edit that passes: once it is here, nothing of the first generation is still to come.
    await edit([{ id: 0, adds: [{ attributes: { parcel_id: 'P-4', status: 'Closed' }, geometry: square(200) }] }]);
    await countChanges(events, 3);
    t.same(
      events.map((event) => event.after?.attributes.parcel_id ?? event.after?.attributes.inspector),
      ['P-1', 'inspector7', 'P-4'],
      `${service}: the Closed parcels inside the envelope, and the inspection (a table without status nor geometry)`,
    );
    t.same(
      first.slice(0, 2).map((event) => [event.source.transaction.index, event.source.transaction.total]),
      [
        [0, 2],
        [1, 2],
      ],
      `${service}: the transaction counts the events that passed`,
    );
    const asked = emulator.requests.filter((line) => line.includes(`/${service.replace('.', '/')}/extractChanges`)).join('\n');
    const pushed = service === 'Hosted/Parcels.FeatureServer';
    t.equal(asked.includes('layerQueries='), pushed, `${service}: the where ${pushed ? 'pushed down' : 'evaluated by geohook'}`);
    t.notOk(asked.includes('geometry='), `${service}: the envelope evaluated by geohook (a table is read too)`);
  }
});

t.test(
  'snapshot "initial": the rows that pass the filters are read once when the service is first followed, then changes stream',
  async (t) => {
    const emulator = await startEmulator(t);
    const edit = (edits: unknown) => emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', { edits });
    await edit([
      {
        id: 0,
        adds: [
          { attributes: { parcel_id: 'P-1', status: 'Open' } },
          { attributes: { parcel_id: 'P-2', status: 'Closed' } },
          { attributes: { parcel_id: 'P-3', status: 'Open' } },
        ],
      },
    ]);
    const prefix = uniquePrefix();
    const config = configFile(t, {
      changes: { [PARCELS]: { snapshot: 'initial', track: ['status'], where: "status = 'Open'", layers: [0] } },
    });
    const start = async () => {
      const geohook = await startGeohook(t, redis, { ...registrationEnv(emulator, [PARCELS], prefix), GEOHOOK_CONFIG: config });
      await waitFor('ready', async () => (await geohook.readyz()).status === 200);
      return geohook;
    };
    const first = await start();
    const events = await consumeChanges(t, redis.url, prefix);
    const read = await countChanges(events, 2);
    t.same(
      read.map((event) => [event.type, event.after?.attributes.parcel_id, event.source.origin]),
      [
        ['change.read', 'P-1', 'snapshot'],
        ['change.read', 'P-3', 'snapshot'],
      ],
      'the Open parcels, read once',
    );
    await edit([{ id: 0, updates: [{ attributes: { objectid: 3, owner: 'Ada' } }] }]);
    const [updated] = (await countChanges(events, 3)).slice(2);
    t.match(updated, { type: 'change.updated', key: { objectId: 3 }, before: { attributes: { status: 'Open' } }, changedFields: [] });
    // Started again on the same Redis: the snapshot is not taken twice.
    await first.stop();
    await start();
    await edit([{ id: 0, updates: [{ attributes: { objectid: 1, status: 'Open', owner: 'Grace' } }] }]);
    await countChanges(events, 4);
    t.same(
      events.map((event) => event.type),
      ['change.read', 'change.read', 'change.updated', 'change.updated'],
      'no read twice',
    );
  },
);
