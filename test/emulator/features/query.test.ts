import t from 'tap';
import { startEmulator, type TestEmulator } from '../../helpers/emulator.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ROADS = 'arcgis/rest/services/Hosted/Roads/FeatureServer/0';

async function query(emulator: TestEmulator, params: Record<string, string>, layer = ROADS): Promise<Json> {
  const form = new URLSearchParams({ f: 'json', token: await emulator.token(), ...params });
  return (await (await fetch(`${emulator.url}/${layer}/query`, { method: 'POST', body: form })).json()) as Json;
}

/** Five roads, west to east, with 1 to 5 lanes and names A to E. */
async function roads(emulator: TestEmulator): Promise<void> {
  const adds = ['A', 'B', 'C', 'D', 'E'].map((name, index) => ({
    attributes: { name: `Road ${name}`, lanes: index + 1 },
    geometry: {
      paths: [
        [
          [index, 0],
          [index + 0.5, 0.5],
        ],
      ],
    },
  }));
  const { status } = await emulator.control('services/Hosted/Roads.FeatureServer/applyEdits', { edits: [{ id: 0, adds }] });
  if (status !== 200) throw new Error('applyEdits failed');
}

t.test('where, objectIds, outFields and orderByFields select and order rows', async (t) => {
  const emulator = await startEmulator(t);
  await roads(emulator);
  const names = (answer: Json) => answer.features.map((feature: Json) => feature.attributes.name);
  t.same(names(await query(emulator, { where: 'lanes >= 2 AND NOT lanes = 4', outFields: 'name' })), ['Road B', 'Road C', 'Road E']);
  t.same(names(await query(emulator, { where: "name LIKE 'Road _' AND lanes IN (1, 5)", outFields: '*' })), ['Road A', 'Road E']);
  t.same(names(await query(emulator, { objectIds: '2,4', outFields: 'name' })), ['Road B', 'Road D']);
  t.same(names(await query(emulator, { where: '1=1', orderByFields: 'lanes DESC', outFields: 'name' })), [
    'Road E',
    'Road D',
    'Road C',
    'Road B',
    'Road A',
  ]);
  const answer = await query(emulator, { where: 'lanes = 1', outFields: 'name', returnGeometry: 'false' });
  t.same(answer.features, [{ attributes: { objectid: 1, name: 'Road A' } }], 'the object id comes with the fields asked for; no geometry');
  t.same(
    answer.fields.map((field: Json) => field.name),
    ['objectid', 'name'],
  );
  t.match(await query(emulator, { where: 'width > 3' }), { error: { code: 400, details: [/where/] } });
});

t.test('paging: resultOffset and resultRecordCount, exceededTransferLimit while rows remain', async (t) => {
  const emulator = await startEmulator(t);
  await roads(emulator);
  const page = async (offset: number) =>
    query(emulator, { where: '1=1', outFields: 'lanes', resultOffset: String(offset), resultRecordCount: '2' });
  const first = await page(0);
  t.same(
    first.features.map((f: Json) => f.attributes.lanes),
    [1, 2],
  );
  t.equal(first.exceededTransferLimit, true);
  t.equal((await page(2)).exceededTransferLimit, true);
  const last = await page(4);
  t.same(
    last.features.map((f: Json) => f.attributes.lanes),
    [5],
  );
  t.notOk('exceededTransferLimit' in last);
  t.same(await query(emulator, { where: 'lanes > 2', returnCountOnly: 'true' }), { count: 3 });
  t.same(await query(emulator, { where: 'lanes > 2', returnIdsOnly: 'true' }), { objectIdFieldName: 'objectid', objectIds: [3, 4, 5] });
});

t.test('outSR and an envelope: WGS 84 in, Web Mercator out, and back', async (t) => {
  const emulator = await startEmulator(t);
  await roads(emulator);
  const mercator = await query(emulator, { where: 'lanes = 2', outSR: '3857' });
  t.same(mercator.spatialReference, { wkid: 3857, latestWkid: 3857 });
  const [[x, y]] = mercator.features[0].geometry.paths[0];
  t.ok(Math.abs(x - 111319.49) < 0.01 && Math.abs(y) < 1e-6, `lon 1 is 111319.49 m east: ${x}, ${y}`);
  const box = await query(emulator, { geometry: '2.2,0.1,3.1,0.3', geometryType: 'esriGeometryEnvelope', inSR: '4326', outFields: 'name' });
  t.same(
    box.features.map((f: Json) => f.attributes.name),
    ['Road C', 'Road D'],
    'road C crosses the box; road D starts inside it',
  );
  const fromMercator = await query(emulator, {
    geometry: JSON.stringify({ xmin: 440000, ymin: 10000, xmax: 460000, ymax: 30000, spatialReference: { wkid: 102100 } }),
    outFields: 'name',
  });
  t.same(
    fromMercator.features.map((f: Json) => f.attributes.name),
    ['Road E'],
  );
});

t.test("the layer resource is the layer's definition: fields with their domain, editor tracking, relationships", async (t) => {
  const emulator = await startEmulator(t);
  const token = await emulator.token();
  const layer = (await (
    await fetch(`${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/0?f=json&token=${token}`)
  ).json()) as Json;
  t.match(layer, {
    id: 0,
    name: 'Parcels',
    type: 'Feature Layer',
    geometryType: 'esriGeometryPolygon',
    spatialReference: { wkid: 102100, latestWkid: 3857 },
    objectIdField: 'objectid',
    globalIdField: 'globalid',
    editFieldsInfo: { creatorField: 'created_user', editDateField: 'last_edited_date' },
    relationships: [{ relatedTableId: 1, cardinality: 'esriRelCardinalityOneToMany' }],
    maxRecordCount: 2000,
    supportsApplyEditsWithGlobalIds: true,
  });
  t.match(
    layer.fields.find((field: Json) => field.name === 'status'),
    {
      type: 'esriFieldTypeString',
      length: 10,
      domain: { type: 'codedValue', name: 'ParcelStatus', codedValues: [{ code: 'Open' }, { code: 'Pending' }, { code: 'Closed' }] },
    },
  );
  t.match(
    layer.fields.find((field: Json) => field.name === 'assessed_value'),
    { type: 'esriFieldTypeBigInteger' },
  );
  const service = (await (
    await fetch(`${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer?f=json&token=${token}`)
  ).json()) as Json;
  t.same([service.layers, service.tables], [[{ id: 0, name: 'Parcels' }], [{ id: 1, name: 'Inspections' }]]);
  const table = (await (
    await fetch(`${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/1?f=json&token=${token}`)
  ).json()) as Json;
  t.match(table, { type: 'Table', relationships: [{ relatedTableId: 0, keyField: 'parcel_guid' }] });
  t.notOk('geometryType' in table);
});
