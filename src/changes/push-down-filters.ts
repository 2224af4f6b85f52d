import type { LayerInfo } from '../arcgis-request/layer-info.js';
import type { ChangeFilters } from '../config/types.js';
import type { LayerFilter } from './change-filter.js';

/**
 * What `extractChanges` is asked to filter: the clauses as `layerQueries` when the server takes them, the envelope
 * as `geometry` when it takes it and every layer read has geometry (the server would leave a table's rows out).
 * `layers` are those the server filters whole; the others are filtered here.
 */
export function pushDown(
  filters: ChangeFilters | undefined,
  scoped: readonly LayerInfo[],
  byLayer: ReadonlyMap<number, LayerFilter>,
  server: { returnsRows: boolean; supportsLayerQueries: boolean; supportsGeometry: boolean },
): { params: Record<string, string>; layers: Set<number> } {
  const params: Record<string, string> = {};
  if (byLayer.size === 0 || !server.returnsRows) return { params, layers: new Set() };
  const clauses = [...byLayer.values()].some((filter) => filter.where !== undefined);
  const whereDown = clauses && server.supportsLayerQueries;
  if (whereDown) {
    params.layerQueries = JSON.stringify(
      Object.fromEntries(
        scoped.map(({ id }) => {
          const where = byLayer.get(id)?.where;
          return [id, where === undefined ? { queryOption: 'all' } : { where, queryOption: 'useFilter' }];
        }),
      ),
    );
  }
  const within = filters?.within;
  const withinDown = within !== undefined && server.supportsGeometry && scoped.every((layer) => layer.geometryType !== undefined);
  if (withinDown) {
    const { xmin, ymin, xmax, ymax } = within;
    const wkid = within.spatialReference?.wkid ?? 4326;
    Object.assign(params, {
      geometry: JSON.stringify({ xmin, ymin, xmax, ymax, spatialReference: { wkid } }),
      geometryType: 'esriGeometryEnvelope',
      inSR: String(wkid),
    });
  }
  const layers = new Set(
    [...byLayer]
      .filter(([, filter]) => (filter.where === undefined || whereDown) && (filter.within === undefined || withinDown))
      .map(([id]) => id),
  );
  return { params, layers };
}
