import { hash } from 'node:crypto';
import type { EsriFeature } from '../arcgis-request/extract-changes.js';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import { GeohookError } from '../errors.js';
import { changeEventId, changeTypeOf, type ChangeEvent, type ChangeOp, type ChangeRow } from './change-event.js';
import type { PreviousValues, PreviousValuesWrite } from './previous-values.js';

/** The fields whose previous values are kept: `*` for all, else their names. */
export type TrackedFields = '*' | readonly string[];

/** What every change event of one range shares: where it comes from, and what geohook knows around it. */
export interface RangeContext {
  hook: string;
  /** `folder/name.FeatureServer`: part of each event's id. */
  serviceName: string;
  service: ChangeEvent['service'];
  serverGens: [number, number];
  track: TrackedFields;
  /** When it was extracted, for events whose layer has no editor tracking. */
  now: Date;
  /** The rows were read with `query` (the server answers ids only): they are the current state. */
  asOf?: 'current';
}

/** A change event before its place in the transaction is known, and what the previous-values store learns from it. */
export interface BuiltChange {
  event: Omit<ChangeEvent, 'source'>;
  write: PreviousValuesWrite | undefined;
}

/** A geometry's hash: what geohook keeps to tell a moved feature from one that stayed. */
export const geometryHash = (geometry: unknown): string => hash('sha256', JSON.stringify(geometry ?? null)).slice(0, 16);

/** The attributes (parsed for this range alone, so changed in place) with BigInteger values as decimal strings. */
function exactAttributes(layer: LayerInfo, attributes: Record<string, unknown>): Record<string, unknown> {
  for (const field of layer.fields) {
    const value = attributes[field.name];
    if (field.type === 'esriFieldTypeBigInteger' && typeof value === 'number') attributes[field.name] = String(value);
  }
  return attributes;
}

export function trackedOf(attributes: Record<string, unknown>, track: TrackedFields, layer: LayerInfo): Record<string, unknown> {
  const names = track === '*' ? layer.fields.map((field) => field.name) : track;
  return Object.fromEntries(names.filter((name) => name in attributes).map((name) => [name, attributes[name]]));
}

const isoOf = (value: unknown): string | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? new Date(value).toISOString() : undefined;

export function editorOf(layer: LayerInfo, attributes: Record<string, unknown>): ChangeEvent['editor'] | undefined {
  const info = layer.editFieldsInfo;
  if (info === undefined) return undefined;
  const user = info.editorField === undefined ? undefined : attributes[info.editorField];
  const at = info.editDateField === undefined ? undefined : isoOf(attributes[info.editDateField]);
  if (typeof user !== 'string' && at === undefined) return undefined;
  return { ...(typeof user === 'string' ? { user } : {}), ...(at === undefined ? {} : { at }) };
}

/** An update's version: its edit time from editor tracking, else a digest of its row. */
function versionOf(layer: LayerInfo, row: ChangeRow): string {
  const field = layer.editFieldsInfo?.editDateField;
  const at = field === undefined ? undefined : row.attributes[field];
  if (typeof at === 'number') return `t${at}`;
  const sorted = Object.fromEntries(Object.entries(row.attributes).sort(([a], [b]) => (a < b ? -1 : 1)));
  return `h${hash('sha256', JSON.stringify([sorted, row.geometry ?? null]))}`;
}

export function rowOf(layer: LayerInfo, feature: EsriFeature, asOf: 'current' | undefined): ChangeRow {
  const row: ChangeRow = { attributes: exactAttributes(layer, feature.attributes) };
  if (feature.geometry !== undefined) row.geometry = feature.geometry;
  if (asOf !== undefined) row.asOf = asOf;
  return row;
}

const eventId = (context: RangeContext, layer: LayerInfo, key: string, op: ChangeOp | 's', version: string): string =>
  changeEventId({ hook: context.hook, service: context.serviceName, layerId: layer.id, key, op, version });

const baseOf = (context: RangeContext, layer: LayerInfo, op: ChangeOp) => ({
  type: changeTypeOf(op),
  op,
  hook: context.hook,
  service: context.service,
  layer: { id: layer.id, name: layer.name },
});

/** Previous values a range may use: none newer than its end. */
const usable = (context: RangeContext, previous: PreviousValues | undefined): PreviousValues | undefined =>
  previous !== undefined && previous.serverGen <= context.serverGens[1] ? previous : undefined;

const tracks = (context: RangeContext): boolean => context.track === '*' || context.track.length > 0;

/** The `change.schema` of a layer whose fields changed since geohook last read them: it comes before any row. */
export function schemaEvent(context: RangeContext, layer: LayerInfo, change: { added: string[]; removed: string[] }): BuiltChange {
  const fields = layer.fields.map((field) => field.name).sort();
  const event: Omit<ChangeEvent, 'source'> = {
    id: eventId(context, layer, 'schema', 's', fields.join(',')),
    type: 'change.schema',
    hook: context.hook,
    service: context.service,
    layer: { id: layer.id, name: layer.name },
    key: {},
    after: null,
    schema: change,
    ts: context.now.toISOString(),
  };
  return { event, write: undefined };
}

/** The object id of a row of `extractChanges` (or `query`): a row without one cannot be told apart, and fails its range. */
export function objectIdOf(layer: LayerInfo, feature: EsriFeature): number {
  const objectId = feature.attributes[layer.objectIdField];
  if (typeof objectId !== 'number')
    throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `a changed row of layer ${layer.id} has no object id (${layer.objectIdField})`);
  return objectId;
}

/**
 * The change event of a created (`c`) or updated (`u`) row, its id content-versioned so that the same version is
 * one id whatever range carried it. With its previous values known (and not newer than the range), an update says
 * its tracked fields before and which changed, and whether its geometry moved.
 */
export function rowEvent(
  context: RangeContext,
  layer: LayerInfo,
  op: 'c' | 'u',
  feature: EsriFeature,
  known: PreviousValues | undefined,
): BuiltChange {
  const after = rowOf(layer, feature, context.asOf);
  const objectId = objectIdOf(layer, feature);
  const globalId = layer.globalIdField === undefined ? undefined : (after.attributes[layer.globalIdField] as string | undefined);
  const key = { objectId, ...(typeof globalId === 'string' ? { globalId } : {}) };
  const hash = after.geometry === undefined ? undefined : geometryHash(after.geometry);
  const editor = editorOf(layer, after.attributes);
  const event: Omit<ChangeEvent, 'source'> = {
    id: eventId(context, layer, globalId ?? `o${objectId}`, op, op === 'c' ? '' : versionOf(layer, after)),
    ...baseOf(context, layer, op),
    key,
    after,
    ts: editor?.at ?? context.now.toISOString(),
  };
  if (editor !== undefined) event.editor = editor;
  if (op === 'c') event.before = null;
  const previous = op === 'u' ? usable(context, known) : undefined;
  if (previous !== undefined) {
    if (tracks(context)) {
      const now = trackedOf(after.attributes, context.track, layer);
      event.before = { attributes: previous.attributes };
      event.changedFields = Object.keys(now).filter(
        (name) => name in previous.attributes && JSON.stringify(now[name]) !== JSON.stringify(previous.attributes[name]),
      );
    }
    if (hash !== undefined && previous.geometryHash !== undefined) event.geometryChanged = hash !== previous.geometryHash;
  }
  const write: PreviousValuesWrite = {
    objectId,
    serverGen: context.serverGens[1],
    ...(typeof globalId === 'string' ? { globalId } : {}),
    ...(hash === undefined ? {} : { geometryHash: hash }),
    attributes: trackedOf(after.attributes, context.track, layer),
  };
  return { event, write };
}

/** The change event of a deleted feature (an object id, or a GlobalID on ArcGIS Online): its last tracked values and both ids, where known. */
export function deleteEvent(
  context: RangeContext,
  layer: LayerInfo,
  deleted: number | string,
  known: PreviousValues | undefined,
): BuiltChange {
  const previous = usable(context, known);
  const objectId = typeof deleted === 'number' ? deleted : previous?.objectId;
  const globalId = typeof deleted === 'string' ? deleted : previous?.globalId;
  const event: Omit<ChangeEvent, 'source'> = {
    id: eventId(context, layer, globalId ?? `o${objectId}`, 'd', ''),
    ...baseOf(context, layer, 'd'),
    key: { ...(objectId === undefined ? {} : { objectId }), ...(globalId === undefined ? {} : { globalId }) },
    after: null,
    ts: context.now.toISOString(),
  };
  if (previous !== undefined && tracks(context)) event.before = { attributes: previous.attributes };
  const write: PreviousValuesWrite | undefined =
    objectId === undefined
      ? undefined
      : { objectId, serverGen: context.serverGens[1], ...(globalId === undefined ? {} : { globalId }), deleted: true };
  return { event, write };
}

/**
 * Where a layer's list of creates, updates or deletes goes in a range's transaction: creates parents before
 * children (the origin of a relationship first), then updates, then deletes children first; layers by id within.
 */
export function listRank(layer: LayerInfo, op: 'c' | 'u' | 'd'): number {
  const child = layer.isChild ? 1 : 0;
  const rank = op === 'c' ? child : op === 'u' ? 2 : 4 - child;
  return rank * 1_000_000 + layer.id;
}
