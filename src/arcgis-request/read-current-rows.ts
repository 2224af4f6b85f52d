import type { EsriFeature, LayerChanges } from './extract-changes.js';
import { readChanges } from './extract-changes.js';
import type { LayerInfo } from './layer-info.js';
import { parseExactJson } from './parse-exact-json.js';
import type { ServiceSession } from './service-session.js';

/**
 * The changes since `from` on a server whose `extractChanges` answers object ids only (10.6.1-era, without
 * `serverGens`): the ids of each layer's changes after its generation `from` (`layerServerGens`, up to now), then
 * the rows of the adds and updates read with `query` in pages of the layer's `maxRecordCount`: the current state of
 * each feature, not as of the range's end. A feature deleted since is left out of them. `readUpTo` is the generation
 * the ids were read up to: the next read starts there, so that no two reads overlap (a feature created in one and
 * deleted in the next would net to nothing).
 */
export async function readCurrentRows(
  session: ServiceSession,
  serviceUrl: URL,
  layers: readonly LayerInfo[],
  from: number,
): Promise<{ edits: LayerChanges[]; readUpTo: number | undefined }> {
  const base = serviceUrl.href.replace(/\/+$/, '');
  const url = new URL(`${base}/extractChanges`);
  url.search = new URLSearchParams({
    layerServerGens: JSON.stringify(layers.map(({ id }) => ({ id, serverGen: from }))),
    layers: `[${layers.map(({ id }) => id).join(',')}]`,
    returnInserts: 'true',
    returnUpdates: 'true',
    returnDeletes: 'true',
    returnIdsOnly: 'true',
    async: 'true',
  }).toString();
  const { edits, layerServerGens } = await readChanges(session, url, parseExactJson);
  const readUpTo = layerServerGens.length === 0 ? undefined : Math.max(...layerServerGens.map(({ serverGen }) => serverGen));
  const read = await Promise.all(
    edits.map(async (edit): Promise<LayerChanges> => {
      const layer = layers.find(({ id }) => id === edit.id);
      const ids = edit.objectIds ?? { adds: [], updates: [], deletes: [] };
      const rows =
        layer === undefined ? new Map<unknown, EsriFeature>() : await readRowsById(session, base, layer, [...ids.adds, ...ids.updates]);
      const present = (list: readonly (number | string)[]): EsriFeature[] => list.flatMap((id) => rows.get(id) ?? []);
      return { id: edit.id, features: { adds: present(ids.adds), updates: present(ids.updates), deleteIds: ids.deletes } };
    }),
  );
  return { edits: read, readUpTo };
}

/** The rows of `objectIds` of a layer of the service at `base`, by object id, read with `query` a page at a time. */
export async function readRowsById(
  session: ServiceSession,
  base: string,
  layer: LayerInfo,
  objectIds: readonly (number | string)[],
): Promise<Map<unknown, EsriFeature>> {
  const rows = new Map<unknown, EsriFeature>();
  for (let start = 0; start < objectIds.length; start += layer.maxRecordCount) {
    const url = new URL(`${base}/${layer.id}/query`);
    url.search = new URLSearchParams({
      objectIds: objectIds.slice(start, start + layer.maxRecordCount).join(','),
      outFields: '*',
      returnGeometry: 'true',
    }).toString();
    const answer = await session.read(url, undefined, parseExactJson);
    for (const feature of Array.isArray(answer.features) ? (answer.features as EsriFeature[]) : []) {
      rows.set(feature.attributes[layer.objectIdField], feature);
    }
  }
  return rows;
}
