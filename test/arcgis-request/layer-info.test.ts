import t from 'tap';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import { readServiceLayers } from '../../src/arcgis-request/layer-info.js';
import { createServiceSession, type ServiceSession } from '../../src/arcgis-request/service-session.js';
import { startEmulator } from '../helpers/emulator.js';

const emulator = await startEmulator(t);
const serviceUrl = new URL(`${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`);

/** A session on the emulator that records the paths it requests; `refuse` answers a path with the product's 400. */
async function session(refuse?: RegExp): Promise<{ read: ServiceSession; paths: string[] }> {
  const paths: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    paths.push(url.pathname.replace('/arcgis/rest/services/Hosted/Parcels/FeatureServer', ''));
    if (refuse?.test(url.pathname)) return Response.json({ error: { code: 400, message: 'Invalid URL', details: [] } });
    return fetch(input, init);
  };
  const read = createServiceSession({
    trusted: trustedUrls([`${emulator.url}/arcgis/`]),
    auth: { token: await emulator.token() },
    fetch: recording,
  });
  return { read, paths };
}

t.test("a service's layer definitions come from its layers resource: two requests, whatever the number of layers", async (t) => {
  const { read, paths } = await session();
  const { layers } = await readServiceLayers(read, serviceUrl);
  t.same(paths, ['', '/layers']);
  t.match(layers, [
    {
      id: 0,
      name: 'Parcels',
      objectIdField: 'objectid',
      globalIdField: 'globalid',
      relatedTableIds: [1],
      isChild: false,
      geometryType: 'esriGeometryPolygon',
    },
    { id: 1, name: 'Inspections', isChild: true },
  ]);
  t.notOk('geometryType' in layers[1]!, 'a table has no geometry');
});

t.test('a server without the layers resource is asked layer by layer, with the same definitions', async (t) => {
  const all = await readServiceLayers((await session()).read, serviceUrl);
  const { read, paths } = await session(/\/layers$/);
  t.same(await readServiceLayers(read, serviceUrl), all);
  t.same(paths.sort(), ['', '/0', '/1', '/layers']);
});
