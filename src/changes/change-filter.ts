import { intersectsEnvelope, projectGeometry, readWkid, type Envelope, type Geometry } from '../arcgis/geometry.js';
import { formatServiceName } from '../arcgis/service-name.js';
import { InvalidWhereError } from '../arcgis/where/where-error.js';
import { compileTransitionWhere, compileWhere, type WhereField } from '../arcgis/where/where.js';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import { isTransitionClause } from '../config/route-filter.js';
import type { ChangeFilters, ChangesServiceSettings, WithinEnvelope } from '../config/types.js';
import { GeohookError } from '../errors.js';
import type { ChangeEvent } from './change-event.js';
import { changeTest } from './transition-filter.js';

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
export function layerFilterOf(filters: ChangesServiceSettings | undefined, layer: LayerInfo): LayerFilter | undefined {
  // A transition filter reads the previous values: the events are filtered once built (serviceEventFilter), not the rows.
  const clause = filters === undefined || isTransitionFilter(filters) ? undefined : clauseOf(filters, layer.id);
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

/** The clause of a service's `where` that applies to layer `id`: the one for every layer, or the layer's own. */
const clauseOf = (filters: ChangeFilters, id: number): string | undefined =>
  typeof filters.where === 'string' ? filters.where : filters.where?.[String(id)];

/** Whether a service's filter reads the change itself (`when`, `emit`, or a `where` naming `before.x` or `after.x`). */
export function isTransitionFilter(filters: ChangesServiceSettings): boolean {
  const clauses = filters.where === undefined ? [] : typeof filters.where === 'string' ? [filters.where] : Object.values(filters.where);
  return filters.when !== undefined || filters.emit !== undefined || clauses.some(isTransitionClause);
}

/** Whether a clause given for every layer applies to one: the layer has every field it names (a related table may not). */
function appliesTo(clause: string, fields: readonly WhereField[]): boolean {
  try {
    compileTransitionWhere(clause, fields);
    return true;
  } catch (err) {
    if (err instanceof InvalidWhereError && err.unknownField !== undefined) return false;
    throw err;
  }
}

/**
 * The services' transition filters (docs/changes.md#transitions) as one filter of built change events: an event of a
 * service with one is kept when its filter takes it, as the type it takes it as (`change.entered`, `change.left`);
 * the events of other services, and `change.schema` events, pass as they are. `layers`: the definitions of the
 * events' layers, whose fields the clauses read.
 */
export function serviceEventFilter(
  byService: Readonly<Record<string, ChangesServiceSettings>>,
): ((events: readonly ChangeEvent[], layers: readonly LayerInfo[]) => ChangeEvent[]) | undefined {
  const filtered = new Map(Object.entries(byService).filter(([, settings]) => isTransitionFilter(settings)));
  if (filtered.size === 0) return undefined;
  const tests = new Map<string, ReturnType<typeof changeTest>>();
  const testOf = (service: string, settings: ChangesServiceSettings, layer: LayerInfo | undefined) => {
    const given = layer === undefined ? undefined : clauseOf(settings, layer.id);
    const clause = given !== undefined && typeof settings.where === 'string' && !appliesTo(given, layer!.fields) ? undefined : given;
    const key = `${service}\n${clause ?? ''}`;
    let test = tests.get(key);
    if (test === undefined) {
      const { when, emit } = settings;
      tests.set(key, (test = changeTest({ ...(clause === undefined ? {} : { where: clause }), when, emit })));
    }
    return test;
  };
  return (events, layers) =>
    events.flatMap((event) => {
      const service = formatServiceName(event.service.folderName, event.service.serviceName, 'FeatureServer');
      const settings = service === undefined ? undefined : filtered.get(service);
      if (settings === undefined || event.type === 'change.schema') return [event];
      const layer = layers.find(({ id }) => id === event.layer.id);
      const type = testOf(service!, settings, layer)(event, layer?.fields);
      return type === false ? [] : [type === event.type ? event : { ...event, type }];
    });
}
