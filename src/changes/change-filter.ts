import { intersectsEnvelope, projectGeometry, readWkid, type Envelope, type Geometry } from '../arcgis/geometry.js';
import { InvalidWhereError } from '../arcgis/where/where-error.js';
import { compileWhere } from '../arcgis/where/where.js';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import type { ChangeFilters, WithinEnvelope } from '../config/types.js';
import { GeohookError } from '../errors.js';

/** What filters one layer: the clause that applies to it, the envelope in its own spatial reference, and both as a test of a row. */
export interface LayerFilter {
  where?: string;
  within?: Envelope;
  /** Whether a row (attributes, and geometry in the layer's spatial reference) passes the clause and the envelope. */
  test(row: { attributes: Record<string, unknown>; geometry?: unknown }): boolean;
}

/** The envelope in the layer's spatial reference: its corners projected (4326 and Web Mercator only). */
function envelopeIn(within: WithinEnvelope, layer: LayerInfo): Envelope {
  const from = readWkid(within.spatialReference?.wkid ?? 4326);
  const to = layer.wkid;
  if ((from !== 4326 && from !== 3857) || (to !== 4326 && to !== 3857))
    throw new GeohookError(
      'GEOHOOK_ERR_CONFIG',
      `changes: within is in wkid ${String(from)} and layer ${layer.id} in ${String(to)}: geohook projects between 4326 and Web Mercator only`,
    );
  const corners = projectGeometry(
    {
      paths: [
        [
          [within.xmin, within.ymin],
          [within.xmax, within.ymax],
        ],
      ],
    },
    from,
    to,
  ) as { paths: [[[number, number], [number, number]]] };
  const [[x1, y1], [x2, y2]] = corners.paths[0];
  return { xmin: Math.min(x1, x2), ymin: Math.min(y1, y2), xmax: Math.max(x1, x2), ymax: Math.max(y1, y2) };
}

const isGeometry = (value: unknown): value is Geometry =>
  typeof value === 'object' && value !== null && ('x' in value || 'paths' in value || 'rings' in value);

/**
 * The filter of `layer`, or undefined when nothing filters it. A clause given for every layer applies to the layers
 * that have every field it names (a related table without them is not filtered); a clause given for the layer
 * applies to it, and one it cannot read is an `InvalidWhereError`. The envelope applies to feature layers.
 */
export function layerFilterOf(filters: ChangeFilters | undefined, layer: LayerInfo): LayerFilter | undefined {
  const clause = typeof filters?.where === 'string' ? filters.where : filters?.where?.[String(layer.id)];
  let matches: ((attributes: Record<string, unknown>) => boolean) | undefined;
  if (clause !== undefined) {
    try {
      matches = compileWhere(clause, layer.fields);
    } catch (err) {
      const forEveryLayer = typeof filters?.where === 'string';
      if (!(forEveryLayer && err instanceof InvalidWhereError && err.unknownField !== undefined)) throw err;
    }
  }
  const within = filters?.within !== undefined && layer.geometryType !== undefined ? envelopeIn(filters.within, layer) : undefined;
  if (matches === undefined && within === undefined) return undefined;
  return {
    ...(matches === undefined ? {} : { where: clause! }),
    ...(within === undefined ? {} : { within }),
    test: (row) =>
      (matches === undefined || matches(row.attributes)) &&
      (within === undefined || (isGeometry(row.geometry) && intersectsEnvelope(row.geometry, within))),
  };
}
