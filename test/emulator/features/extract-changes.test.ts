import t from 'tap';
import { defaultCatalog } from '../../../src/emulator/catalog.js';
import type { CatalogService } from '../../../src/emulator/types.js';
import { startEmulator, type TestEmulator } from '../../helpers/emulator.js';

// 100,000 features added and read back: past tap's 60 s beside the other test files.
t.setTimeout(180_000);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ENTERPRISE = 'arcgis/rest/services/Hosted/Parcels/FeatureServer';
const ONLINE = 'geohookOrg/ArcGIS/rest/services/Parcels/FeatureServer';

const parcel = (id: string, status: string, x = 0) => ({
  attributes: { parcel_id: id, status },
  geometry: {
    rings: [
      [
        [x, 0],
        [x, 50],
        [x + 50, 50],
        [x + 50, 0],
        [x, 0],
      ],
    ],
  },
});

async function edit(emulator: TestEmulator, edits: unknown[]): Promise<Json> {
  const { status, body } = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', { edits });
  if (status !== 200) throw new Error(`applyEdits: ${JSON.stringify(body)}`);
  return body;
}

async function rest(emulator: TestEmulator, path: string, params: Record<string, string>): Promise<Json> {
  const form = new URLSearchParams({ f: 'json', token: await emulator.token(), ...params });
  return (await (await fetch(`${emulator.url}/${path}`, { method: 'POST', body: form })).json()) as Json;
}

/** extractChanges, following an asynchronous job to its result on the storage path (read without a token). */
async function extract(emulator: TestEmulator, root: string, params: Record<string, string>): Promise<Json> {
  const answer = await rest(emulator, `${root}/extractChanges`, params);
  if (answer.statusUrl === undefined) return answer;
  for (;;) {
    const status = await rest(emulator, new URL(answer.statusUrl as string).pathname.slice(1), {});
    if (status.status === 'InProgress') continue;
    if (status.status !== 'Completed') return status;
    return (await (await fetch(status.resultUrl as string)).json()) as Json;
  }
}

/** Three parcels and two inspections, then one generation of updates and deletes on both layers. */
async function history(emulator: TestEmulator): Promise<{ from: number; to: number; ids: Json }> {
  const start = await edit(emulator, [{ id: 0, adds: [parcel('P-0', 'Open', 0)] }]);
  const added = await edit(emulator, [
    { id: 0, adds: [parcel('P-1', 'Open', 100), parcel('P-2', 'Open', 200), parcel('P-3', 'Open', 300)] },
    { id: 1, adds: [{ attributes: { inspector: 'a' } }, { attributes: { inspector: 'b' } }] },
  ]);
  await edit(emulator, [
    {
      id: 0,
      updates: [{ attributes: { objectid: 1, status: 'Closed' } }, { attributes: { objectid: 2, status: 'Pending' } }],
      deletes: [3, 4],
    },
    { id: 1, updates: [{ attributes: { objectid: 1, result: 'pass' } }], deletes: [2] },
  ]);
  const last = await edit(emulator, [{ id: 0, updates: [{ attributes: { objectid: 2, owner: 'Ada' } }] }]);
  return { from: start.serverGen, to: last.serverGen, ids: added.results };
}

const sides = [
  ['Enterprise', ENTERPRISE],
  ['Online', ONLINE],
] as const;

for (const [side, root] of sides) {
  for (const async of [false, true]) {
    t.test(`${side}: extractChanges${async ? ' (async)' : ''} answers the net changes of a range with full rows`, async (t) => {
      const emulator = await startEmulator(t);
      const { from, to } = await history(emulator);
      const answer = await extract(emulator, root, { serverGens: `[${from},${to}]`, layers: '[0,1]', async: String(async) });
      t.same(answer.layerServerGens, [
        { id: 0, serverGen: to },
        { id: 1, serverGen: to },
      ]);
      const [parcels, inspections] = answer.edits;
      t.same(
        parcels.features.adds.map((f: Json) => [f.attributes.objectid, f.attributes.status, f.attributes.owner]),
        [[2, 'Pending', 'Ada']],
        'P-1: an add with its latest row',
      );
      t.same(
        parcels.features.updates.map((f: Json) => [f.attributes.objectid, f.attributes.status]),
        [[1, 'Closed']],
        'P-0 was made before the range',
      );
      t.same(parcels.features.deleteIds, [], 'P-2 and P-3 were added and deleted inside the range: nothing');
      t.match(parcels.features.adds[0].geometry, {
        rings: [
          [
            [100, 0],
            [100, 50],
            [150, 50],
            [150, 0],
            [100, 0],
          ],
        ],
      });
      t.same(
        inspections.features.adds.map((f: Json) => [f.attributes.objectid, f.attributes.result]),
        [[1, 'pass']],
      );
      t.same(inspections.features.deleteIds, []);
      t.notOk('geometry' in inspections.features.adds[0], 'a table row has no geometry');
    });
  }
}

t.test('a range that starts after the adds reports updates and deletes; ids only gives their ids', async (t) => {
  const emulator = await startEmulator(t);
  await edit(emulator, [{ id: 0, adds: [parcel('P-1', 'Open'), parcel('P-2', 'Open')] }]);
  const mark = (await edit(emulator, [{ id: 1, adds: [{ attributes: { inspector: 'x' } }] }])).serverGen;
  const last = (await edit(emulator, [{ id: 0, updates: [{ attributes: { objectid: 1, status: 'Closed' } }], deletes: [2] }])).serverGen;
  const full = await extract(emulator, ENTERPRISE, { serverGens: `[${mark},${last}]` });
  t.same(
    full.edits.map((layer: Json) => layer.id),
    [0],
    'without layers: the layers with changes',
  );
  t.same(full.edits[0].features.deleteIds, [2]);
  t.same(
    full.edits[0].features.updates.map((f: Json) => f.attributes.status),
    ['Closed'],
  );
  const ids = await extract(emulator, ENTERPRISE, { serverGens: `[${mark},${last}]`, returnIdsOnly: 'true', layers: '[0]' });
  t.same(ids.edits, [{ id: 0, objectIds: { adds: [], updates: [1], deletes: [2] } }]);
});

t.test('on the Online organization deletes are GlobalIDs', async (t) => {
  const emulator = await startEmulator(t);
  const added = await edit(emulator, [{ id: 0, adds: [parcel('P-1', 'Open')] }]);
  const deleted = await edit(emulator, [{ id: 0, deletes: [1] }]);
  const online = await extract(emulator, ONLINE, { serverGens: `[${added.serverGen},${deleted.serverGen}]`, async: 'true' });
  t.same(online.edits[0].features.deleteIds, [added.results[0].addResults[0].globalId]);
  const enterprise = await extract(emulator, ENTERPRISE, { serverGens: `[${added.serverGen},${deleted.serverGen}]` });
  t.same(enterprise.edits[0].features.deleteIds, [1]);
});

t.test('layerQueries and an envelope keep only the matching changes', async (t) => {
  const emulator = await startEmulator(t);
  const first = await edit(emulator, [{ id: 0, adds: [parcel('P-0', 'Open', -500)] }]);
  const last = await edit(emulator, [
    { id: 0, adds: [parcel('P-1', 'Open', 0), parcel('P-2', 'Closed', 1000), parcel('P-3', 'Closed', 5000)] },
  ]);
  const range = { serverGens: `[${first.serverGen},${last.serverGen}]`, layers: '[0]' };
  const where = await extract(emulator, ENTERPRISE, {
    ...range,
    layerQueries: JSON.stringify({ 0: { where: "status = 'Closed'", queryOption: 'useFilter' } }),
  });
  t.same(
    where.edits[0].features.adds.map((f: Json) => f.attributes.parcel_id),
    ['P-2', 'P-3'],
  );
  const box = await extract(emulator, ENTERPRISE, {
    ...range,
    geometry: '900,-10,1100,10',
    geometryType: 'esriGeometryEnvelope',
    inSR: '102100',
  });
  t.same(
    box.edits[0].features.adds.map((f: Json) => f.attributes.parcel_id),
    ['P-2'],
  );
  const none = await extract(emulator, ENTERPRISE, { ...range, layerQueries: JSON.stringify({ 0: { queryOption: 'none' } }) });
  t.same(none.edits[0].features.adds, []);
  const wgs84 = await extract(emulator, ENTERPRISE, { ...range, outSR: '4326' });
  const [x, y] = wgs84.edits[0].features.adds[1].geometry.rings[0][2];
  t.ok(Math.abs(x - 0.0094323) < 1e-6 && Math.abs(y - 0.000449) < 1e-5, `outSR 4326: 1050 m east is 0.0094323°: ${x},${y}`);
  const bad = await rest(emulator, `${ENTERPRISE}/extractChanges`, {
    ...range,
    layerQueries: JSON.stringify({ 0: { where: 'nope = 1' } }),
  });
  t.match(bad, { error: { code: 400 } });
});

t.test('layerServerGens reads each layer from its own generation; a layers list that disagrees fails the job', async (t) => {
  const emulator = await startEmulator(t);
  const first = await edit(emulator, [
    { id: 0, adds: [parcel('P-1', 'Open')] },
    { id: 1, adds: [{ attributes: { inspector: 'a' } }] },
  ]);
  await edit(emulator, [{ id: 1, adds: [{ attributes: { inspector: 'b' } }] }]);
  const gens = JSON.stringify([
    { id: 0, serverGen: first.serverGen - 1 },
    { id: 1, serverGen: first.serverGen },
  ]);
  const answer = await extract(emulator, ENTERPRISE, { layerServerGens: gens, async: 'true' });
  t.same(
    answer.edits.map((layer: Json) => [layer.id, layer.features.adds.length]),
    [
      [0, 1],
      [1, 1],
    ],
  );
  const failed = await extract(emulator, ENTERPRISE, { layerServerGens: gens, layers: '[0]', async: 'true' });
  t.match(failed, { status: 'Failed', error: 'Invalid Sync model type. syncLayers json object is required.' });
  t.match(
    await rest(emulator, `${ENTERPRISE}/extractChanges`, { layerServerGens: gens, serverGens: '[1,2]' }),
    { error: { code: 400 } },
    'not both',
  );
  t.match(await rest(emulator, `${ENTERPRISE}/extractChanges`, { serverGens: '[1,2]', dataFormat: 'sqlite' }), {
    error: { code: 400, details: [/sqlite/] },
  });
});

t.test('the result URL needs no token and expires; the status URL needs one', async (t) => {
  const emulator = await startEmulator(t);
  const added = await edit(emulator, [{ id: 0, adds: [parcel('P-1', 'Open')] }]);
  const { statusUrl } = await rest(emulator, `${ENTERPRISE}/extractChanges`, {
    serverGens: `[${added.serverGen - 1},${added.serverGen}]`,
    async: 'true',
  });
  t.match(await (await fetch(`${statusUrl}?f=json`)).json(), { error: { code: 499 } });
  await rest(emulator, new URL(statusUrl).pathname.slice(1), {});
  const { resultUrl } = await rest(emulator, new URL(statusUrl).pathname.slice(1), {});
  t.match(resultUrl, new RegExp(`^${emulator.url}/emulator/storage/[0-9a-f]{32}$`));
  t.equal((await fetch(resultUrl)).status, 200);
  await emulator.control('clock', { advanceDays: 1 });
  t.equal((await fetch(resultUrl)).status, 404, 'expired');
});

t.test('capability profiles: 11.x does everything, a 10.6.1-era server answers object ids only', async (t) => {
  const catalog: CatalogService[] = [
    ...defaultCatalog,
    {
      ...defaultCatalog.find((service) => service.serviceName === 'Parcels')!,
      serviceName: 'OldParcels',
      extractChanges: 'enterprise-10.6.1',
    },
  ];
  const emulator = await startEmulator(t, { catalog });
  const resource = async (name: string) => rest(emulator, `arcgis/rest/services/Hosted/${name}/FeatureServer`, {});
  t.match((await resource('Parcels')).extractChangesCapabilities, {
    supportsFeatureReturn: true,
    supportsLayerQueries: true,
    supportsGeometry: true,
    supportsServerGens: true,
  });
  t.match((await resource('OldParcels')).extractChangesCapabilities, {
    supportsReturnIdsOnly: true,
    supportsFeatureReturn: false,
    supportsServerGens: false,
  });
  const { body } = await emulator.control('services/Hosted/OldParcels.FeatureServer/applyEdits', {
    edits: [{ id: 0, adds: [parcel('P-1', 'Open')] }],
  });
  const old = 'arcgis/rest/services/Hosted/OldParcels/FeatureServer/extractChanges';
  const gens = JSON.stringify([{ id: 0, serverGen: (body.serverGen as number) - 1 }]);
  t.match(await rest(emulator, old, { layerServerGens: gens }), { error: { code: 400, details: [/returnIdsOnly/] } }, 'rows refused');
  t.match(await rest(emulator, old, { serverGens: '[1,2]', returnIdsOnly: 'true' }), { error: { code: 400, details: [/serverGens/] } });
  t.same((await rest(emulator, old, { layerServerGens: gens, returnIdsOnly: 'true' })).edits, [
    { id: 0, objectIds: { adds: [1], updates: [], deletes: [] } },
  ]);
});

t.test('bulk adds 100,000 features in one generation, and the asynchronous extractChanges answers every one', async (t) => {
  const emulator = await startEmulator(t);
  const { status, body } = await emulator.control('services/Hosted/Parcels.FeatureServer/bulk', { layerId: 0, count: 100_000 });
  t.equal(status, 200);
  t.equal(body.count, 100_000);
  const serverGen = body.serverGen as number;
  const answer = await extract(emulator, ENTERPRISE, {
    serverGens: `[${serverGen - 1},${serverGen}]`,
    async: 'true',
    returnIdsOnly: 'true',
  });
  const adds = answer.edits[0].objectIds.adds as number[];
  t.equal(adds.length, 100_000);
  t.equal(adds[99_999], 100_000);
  const rows = await extract(emulator, ENTERPRISE, { serverGens: `[${serverGen - 1},${serverGen}]`, async: 'true', layers: '[0]' });
  t.equal(rows.edits[0].features.adds.length, 100_000);
  t.match(rows.edits[0].features.adds[42], { attributes: { objectid: 43, status: /^(Open|Pending|Closed)$/ }, geometry: { rings: Array } });
});
