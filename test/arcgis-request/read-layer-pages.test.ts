import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import t, { type Test } from 'tap';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import type { LayerInfo } from '../../src/arcgis-request/layer-info.js';
import { featurePages, readLayerPages, type PageReading } from '../../src/arcgis-request/read-layer-pages.js';
import { createServiceSession } from '../../src/arcgis-request/service-session.js';
import type { MirrorLayer } from '../../src/mirror/column-types.js';
import { createPageEncoder } from '../../src/mirror/page-encoder.js';
import { startEmulator } from '../helpers/emulator.js';

/** Parcels as the mirror reads it, with pages of 10 rows. */
const parcels: LayerInfo = {
  id: 0,
  name: 'Parcels',
  objectIdField: 'objectid',
  globalIdField: 'globalid',
  fields: [],
  relatedTableIds: [],
  isChild: false,
  relationships: [],
  maxRecordCount: 10,
};

/**
 * Reads Parcels (25 bulk-added, 4 deleted, 5 added once the ids are read) on an emulator of its own with
 * `reading`, and checks each row once in object id order, the pages, the requests' wheres, three at a time.
 */
async function readsEveryRowOnce<P>(t: Test, reading: (layer: MirrorLayer) => PageReading<P>, idsOf: (page: P) => number[]): Promise<void> {
  const emulator = await startEmulator(t);
  const serviceUrl = new URL(`${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`);
  const token = await emulator.token();
  t.equal((await emulator.control('services/Hosted/Parcels.FeatureServer/bulk', { layerId: 0, count: 25 })).status, 200);
  const authentication = ApiKeyManager.fromKey(token);
  await applyEdits({ url: `${serviceUrl.href}/0`, authentication, deletes: [3, 4, 5, 12] });
  const layer = (await (await fetch(`${serviceUrl.href}/0?f=json&token=${token}`)).json()) as MirrorLayer;

  const wheres: string[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  let added = false;
  const recording: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const where = url.searchParams.get('where') ?? '';
    wheres.push(url.searchParams.get('returnIdsOnly') === 'true' ? 'ids' : where);
    if (!added && where.includes('<=')) {
      // Five parcels added once the ids are read: they come after the ranges.
      added = true;
      await emulator.control('services/Hosted/Parcels.FeatureServer/bulk', { layerId: 0, count: 5 });
    }
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    try {
      return await fetch(input, init);
    } finally {
      inFlight -= 1;
    }
  };
  const session = createServiceSession({ trusted: trustedUrls([`${emulator.url}/arcgis/`]), auth: { token }, fetch: recording });

  const pages: number[][] = [];
  for await (const page of readLayerPages(session, serviceUrl, parcels, reading(layer))) pages.push(idsOf(page));
  const expected = [...Array.from({ length: 30 }, (_, index) => index + 1)].filter((id) => ![3, 4, 5, 12].includes(id));
  t.same(pages.flat(), expected, 'each row once, in object id order');
  t.ok(
    pages.every((page) => page.length > 0 && page.length <= 10),
    'no page over maxRecordCount, none empty',
  );
  t.same(wheres, [
    'ids',
    'objectid > 0 AND objectid <= 14',
    'objectid > 14 AND objectid <= 24',
    'objectid > 24 AND objectid <= 25',
    'objectid > 25',
    'objectid > 30',
  ]);
  t.equal(mostInFlight, 3, 'three pages requested at once');
}

t.test('every row once, in pages of maxRecordCount: ids first, ranges three at a time, then the rows added meanwhile', async (t) => {
  await readsEveryRowOnce(
    t,
    () => featurePages(parcels),
    (page) => page.map((row) => row.attributes.objectid as number),
  );
});

t.test('the same pages encoded as COPY lines on the page encoder thread', async (t) => {
  const encoder = createPageEncoder();
  t.teardown(() => encoder.close());
  await readsEveryRowOnce(
    t,
    (layer) => encoder.of(layer),
    // objectid is the first column.
    (page) =>
      new TextDecoder()
        .decode(page.lines)
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => Number(line.split('\t')[0])),
  );
});
