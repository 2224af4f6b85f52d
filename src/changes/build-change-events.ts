import { createHash } from 'node:crypto';
import type { EsriFeature, LayerChanges } from '../arcgis-request/extract-changes.js';
import { changeEventId, changeTypeOf, type ChangeEvent, type ChangeOp, type ChangeRow, type ChangeSource } from './change-event.js';
import type { LayerInfo } from './layer-info.js';
import type { PreviousValues, PreviousValuesWrite } from './previous-values.js';

/** The fields whose previous values are kept: `*` for all, else their names. */
export type TrackedFields = '*' | readonly string[];

/** A range's rows to turn into change events, with what geohook knows around them. */
export interface RangeInput {
  hook: string;
  /** `folder/name.FeatureServer`: part of each event's id. */
  serviceName: string;
  service: ChangeEvent['service'];
  serverGens: [number, number];
  origin: ChangeSource['origin'];
  parentEventId?: string;
  /** The transaction id: every event of the range shares it. */
  transactionId: string;
  layers: ReadonlyMap<number, LayerInfo>;
  edits: readonly LayerChanges[];
  /** Previous values by layer, then by the id the server gave (object id, or GlobalID for ArcGIS Online deletes). */
  previous: ReadonlyMap<number, ReadonlyMap<number | string, PreviousValues>>;
  track: TrackedFields;
  /** When it was extracted, for events whose layer has no editor tracking. */
  now: Date;
  /** The rows were read with `query` (the server answers ids only): they are the current state. */
  asOf?: 'current';
  /** Layers whose fields changed since geohook last read them: a `change.schema` each, before any row. */
  schemaChanges?: readonly { layerId: number; added: string[]; removed: string[] }[];
}

/** The events of a range, in transaction order, and what the previous-values store learns from them, by layer. */
export interface RangeEvents {
  events: ChangeEvent[];
  writes: Map<number, PreviousValuesWrite[]>;
}

interface Pending {
  op: ChangeOp | 's';
  layer: LayerInfo;
  event: Omit<ChangeEvent, 'source'>;
  write: PreviousValuesWrite | undefined;
}

/** A geometry's hash: what geohook keeps to tell a moved feature from one that stayed. */
export const geometryHash = (geometry: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(geometry ?? null))
    .digest('hex')
    .slice(0, 16);

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
  return `h${createHash('sha256')
    .update(JSON.stringify([sorted, row.geometry ?? null]))
    .digest('hex')}`;
}

export function rowOf(layer: LayerInfo, feature: EsriFeature, asOf: 'current' | undefined): ChangeRow {
  const row: ChangeRow = { attributes: exactAttributes(layer, feature.attributes) };
  if (feature.geometry !== undefined) row.geometry = feature.geometry;
  if (asOf !== undefined) row.asOf = asOf;
  return row;
}

/**
 * Turns a range's net changes into change events (docs/changes.md#the-event): one per changed feature, its id
 * content-versioned so that the same version is one id whatever range carried it. Creates go parents before children
 * (the origin of a relationship first), updates by layer, deletes children first; `transaction.index` counts over
 * them all. With previous values known (and not newer than the range), an update says its tracked fields before and
 * which changed, and whether its geometry moved; a delete its last tracked values and both of its ids.
 */
export function buildChangeEvents(input: RangeInput): RangeEvents {
  const [, to] = input.serverGens;
  const pending: Pending[] = [];
  const base = (layer: LayerInfo, op: ChangeOp) => ({
    type: changeTypeOf(op),
    op,
    hook: input.hook,
    service: input.service,
    layer: { id: layer.id, name: layer.name },
  });
  const id = (layer: LayerInfo, key: string, op: ChangeOp, version: string): string =>
    changeEventId({ hook: input.hook, service: input.serviceName, layerId: layer.id, key, op, version });
  /** Previous values the range may use: none newer than its end. */
  const usable = (layer: LayerInfo, key: number | string): PreviousValues | undefined => {
    const previous = input.previous.get(layer.id)?.get(key);
    return previous !== undefined && previous.serverGen <= to ? previous : undefined;
  };
  const tracking = input.track === '*' || input.track.length > 0;

  for (const { layerId, added, removed } of input.schemaChanges ?? []) {
    const layer = input.layers.get(layerId);
    if (layer === undefined) continue;
    const fields = layer.fields.map((field) => field.name).sort();
    const event: Omit<ChangeEvent, 'source'> = {
      id: changeEventId({ hook: input.hook, service: input.serviceName, layerId, key: 'schema', op: 's', version: fields.join(',') }),
      type: 'change.schema',
      hook: input.hook,
      service: input.service,
      layer: { id: layer.id, name: layer.name },
      key: {},
      after: null,
      schema: { added, removed },
      ts: input.now.toISOString(),
    };
    pending.push({ op: 's', layer, event, write: undefined });
  }

  for (const changes of input.edits) {
    const layer = input.layers.get(changes.id);
    if (layer === undefined) continue;
    for (const [op, features] of [
      ['c', changes.features.adds],
      ['u', changes.features.updates],
    ] as const) {
      for (const feature of features) {
        const after = rowOf(layer, feature, input.asOf);
        const objectId = after.attributes[layer.objectIdField];
        if (typeof objectId !== 'number') continue;
        const globalId = layer.globalIdField === undefined ? undefined : (after.attributes[layer.globalIdField] as string | undefined);
        const key = { objectId, ...(typeof globalId === 'string' ? { globalId } : {}) };
        const hash = after.geometry === undefined ? undefined : geometryHash(after.geometry);
        const editor = editorOf(layer, after.attributes);
        const event: Omit<ChangeEvent, 'source'> = {
          id: id(layer, globalId ?? `o${objectId}`, op, op === 'c' ? '' : versionOf(layer, after)),
          ...base(layer, op),
          key,
          after,
          ts: editor?.at ?? input.now.toISOString(),
        };
        if (editor !== undefined) event.editor = editor;
        if (op === 'c') event.before = null;
        const previous = op === 'u' ? usable(layer, objectId) : undefined;
        if (previous !== undefined) {
          if (tracking) {
            const now = trackedOf(after.attributes, input.track, layer);
            event.before = { attributes: previous.attributes };
            event.changedFields = Object.keys(now).filter(
              (name) => name in previous.attributes && JSON.stringify(now[name]) !== JSON.stringify(previous.attributes[name]),
            );
          }
          if (hash !== undefined && previous.geometryHash !== undefined) event.geometryChanged = hash !== previous.geometryHash;
        }
        const write: PreviousValuesWrite = {
          objectId,
          serverGen: to,
          ...(typeof globalId === 'string' ? { globalId } : {}),
          ...(hash === undefined ? {} : { geometryHash: hash }),
          attributes: trackedOf(after.attributes, input.track, layer),
        };
        pending.push({ op, layer, event, write });
      }
    }
    for (const deleted of changes.features.deleteIds) {
      const previous = usable(layer, deleted);
      const objectId = typeof deleted === 'number' ? deleted : previous?.objectId;
      const globalId = typeof deleted === 'string' ? deleted : previous?.globalId;
      const event: Omit<ChangeEvent, 'source'> = {
        id: id(layer, globalId ?? `o${objectId}`, 'd', ''),
        ...base(layer, 'd'),
        key: { ...(objectId === undefined ? {} : { objectId }), ...(globalId === undefined ? {} : { globalId }) },
        after: null,
        ts: input.now.toISOString(),
      };
      if (previous !== undefined && tracking) event.before = { attributes: previous.attributes };
      const write: PreviousValuesWrite | undefined =
        objectId === undefined ? undefined : { objectId, serverGen: to, ...(globalId === undefined ? {} : { globalId }), deleted: true };
      pending.push({ op: 'd', layer, event, write });
    }
  }

  const rank = (item: Pending): number => {
    if (item.op === 's') return -1;
    const parentFirst = item.layer.isChild ? 1 : 0;
    if (item.op === 'c') return parentFirst;
    if (item.op === 'u') return 2;
    return 4 - parentFirst;
  };
  const ordered = pending
    .map((item, index) => ({ item, index }))
    .sort((a, b) => rank(a.item) - rank(b.item) || a.item.layer.id - b.item.layer.id || a.index - b.index);
  const total = ordered.length;
  const writes = new Map<number, PreviousValuesWrite[]>();
  const events = ordered.map(({ item }, index): ChangeEvent => {
    if (item.write !== undefined) {
      if (!writes.has(item.layer.id)) writes.set(item.layer.id, []);
      writes.get(item.layer.id)!.push(item.write);
    }
    const source: ChangeSource = {
      origin: input.origin,
      serverGens: input.serverGens,
      ...(input.parentEventId === undefined ? {} : { parentEventId: input.parentEventId }),
      transaction: { id: input.transactionId, index, total },
    };
    return { ...item.event, source };
  });
  return { events, writes };
}
