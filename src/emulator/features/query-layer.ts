import { AdminError, invalidParameter } from '../admin-error.js';
import type { Params } from '../params.js';
import type { Row } from './change-log.js';
import type { FeatureLayer } from './feature-layer.js';
import { intersectsEnvelope, normalizeWkid, parseEnvelope, project } from './geometry.js';
import { objectIdRangeOf } from './object-id-range.js';
import type { Envelope, FieldDefinition } from './types.js';
import { compileWhere } from './where.js';

/** What a layer's `query` answers: rows, their ids, or their count. */
export type QueryAnswer =
  | { kind: 'count'; count: number }
  | { kind: 'ids'; objectIds: number[] }
  | {
      kind: 'rows';
      rows: Row[];
      fields: FieldDefinition[];
      returnGeometry: boolean;
      outSR: number | undefined;
      exceededTransferLimit: boolean;
    };

const invalidQuery = (reason: string): AdminError => new AdminError(400, 'Unable to complete operation.', reason);

/** `outFields`: `*` (or none) for every field, else the named ones (the object id field always comes too). */
function outFieldsOf(params: Params, layer: FeatureLayer): FieldDefinition[] {
  const text = params.string('outFields')?.trim() ?? '*';
  const { fields, objectIdField } = layer.definition;
  if (text === '' || text === '*') return fields;
  const names = new Set(text.split(',').map((name) => name.trim().toLowerCase()));
  for (const name of names) {
    if (!fields.some((field) => field.name.toLowerCase() === name))
      throw invalidQuery(`'outFields' names a field '${name}' the layer does not have.`);
  }
  return fields.filter((field) => field.name === objectIdField || names.has(field.name.toLowerCase()));
}

/** How a query's rows are ordered: a comparator, and whether it is the object ids ascending (the layer's own order). */
interface RowOrder {
  compare: (a: Row, b: Row) => number;
  byObjectId: boolean;
}

/** `orderByFields`: `field [ASC|DESC], …`, compared as the fields' values, nulls first in ascending order. */
function orderOf(params: Params, layer: FeatureLayer): RowOrder {
  const text = params.string('orderByFields')?.trim() ?? '';
  const keys = (text === '' ? [layer.definition.objectIdField] : text.split(',')).map((part) => {
    const [name = '', direction = 'ASC', ...rest] = part.trim().split(/\s+/);
    const field = layer.definition.fields.find((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
    if (field === undefined || rest.length > 0 || !/^(asc|desc)$/i.test(direction))
      throw invalidQuery(`'orderByFields' is invalid at '${part.trim()}'.`);
    return { name: field.name, sign: direction.toUpperCase() === 'DESC' ? -1 : 1 };
  });
  const compare = (a: Row, b: Row): number => {
    for (const { name, sign } of keys) {
      const [x, y] = [a.attributes[name] ?? null, b.attributes[name] ?? null];
      if (x === y) continue;
      if (x === null) return -sign;
      if (y === null) return sign;
      return (x < y ? -1 : x > y ? 1 : 0) * sign;
    }
    return 0;
  };
  const byObjectId = keys.length === 1 && keys[0]!.name === layer.definition.objectIdField && keys[0]!.sign === 1;
  return { compare, byObjectId };
}

/** The `geometry` envelope in the layer's spatial reference, if the request gives one. */
function envelopeOf(params: Params, layer: FeatureLayer): Envelope | undefined {
  if (!params.has('geometry')) return undefined;
  params.oneOf('geometryType', ['esriGeometryEnvelope']);
  params.oneOf('spatialRel', ['esriSpatialRelIntersects', 'esriSpatialRelEnvelopeIntersects']);
  const { envelope, wkid } = parseEnvelope(params.string('geometry'), 'geometry');
  const own = layer.definition.spatialReference === undefined ? undefined : normalizeWkid(layer.definition.spatialReference);
  const from = params.has('inSR') ? normalizeWkid(params.string('inSR')) : wkid;
  if (own === undefined || from === undefined || from === own) return envelope;
  const corners = project(
    {
      paths: [
        [
          [envelope.xmin, envelope.ymin],
          [envelope.xmax, envelope.ymax],
        ],
      ],
    },
    from,
    own,
    'inSR',
  ) as { paths: number[][][] };
  const [[x1, y1], [x2, y2]] = corners.paths[0] as [[number, number], [number, number]];
  return { xmin: Math.min(x1, x2), ymin: Math.min(y1, y2), xmax: Math.max(x1, x2), ymax: Math.max(y1, y2) };
}

/** `objectIds`: a comma-separated list of object ids. */
function objectIdsOf(params: Params): Set<number> | undefined {
  const text = params.string('objectIds')?.trim();
  if (text === undefined || text === '') return undefined;
  const ids = text.split(',').map((item) => Number(item.trim()));
  if (!ids.every((id) => Number.isSafeInteger(id) && id > 0))
    throw invalidParameter('objectIds', 'must be a comma-separated list of object ids');
  return new Set(ids);
}

/**
 * A layer's `query`: rows matching `where`, `objectIds` and a `geometry` envelope, ordered by `orderByFields` (the
 * object id by default), paged by `resultOffset` and `resultRecordCount` within the layer's `maxRecordCount`
 * (`exceededTransferLimit` when more remain); or only their ids (`returnIdsOnly`) or count (`returnCountOnly`).
 */
export function queryLayer(params: Params, layer: FeatureLayer): QueryAnswer {
  const whereText = params.string('where')?.trim() || '1=1';
  const where = compileWhere(whereText, layer.definition.fields);
  const objectIds = objectIdsOf(params);
  const envelope = envelopeOf(params, layer);
  const countOnly = params.boolean('returnCountOnly') === true;
  const order = orderOf(params, layer);
  const { objectIdField, maxRecordCount } = layer.definition;
  const idsOnly = params.boolean('returnIdsOnly') === true;
  const offset = params.integer('resultOffset', 0, Number.MAX_SAFE_INTEGER) ?? 0;
  const count = Math.min(params.integer('resultRecordCount', 1, Number.MAX_SAFE_INTEGER) ?? maxRecordCount, maxRecordCount);
  // In the layer's own order a page is known once one row past it is found (whether more remain).
  const enough = countOnly || idsOnly || !order.byObjectId ? Number.POSITIVE_INFINITY : offset + count + 1;
  // The rows are in object id order: those below the clause's range are skipped untested, and none past it is read.
  const range = objectIdRangeOf(whereText, objectIdField);
  const matching: Row[] = [];
  for (const [objectId, row] of layer.rows()) {
    if (objectId < range.min) continue;
    if (objectId > range.max) break;
    if (objectIds !== undefined && !objectIds.has(objectId)) continue;
    if (!where(row.attributes)) continue;
    if (envelope !== undefined && (row.geometry === null || !intersectsEnvelope(row.geometry, envelope))) continue;
    if (matching.push(row) === enough) break;
  }
  if (countOnly) return { kind: 'count', count: matching.length };
  if (!order.byObjectId) matching.sort(order.compare);
  if (idsOnly) return { kind: 'ids', objectIds: matching.map((row) => row.attributes[objectIdField] as number) };
  const rows = matching.slice(offset, offset + count);
  return {
    kind: 'rows',
    rows,
    fields: outFieldsOf(params, layer),
    returnGeometry: layer.definition.type !== 'Table' && params.boolean('returnGeometry') !== false,
    outSR: params.has('outSR') ? normalizeWkid(params.string('outSR')) : undefined,
    exceededTransferLimit: offset + rows.length < matching.length,
  };
}
