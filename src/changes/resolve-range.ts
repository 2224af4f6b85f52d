import { createHash } from 'node:crypto';
import { parseServiceName } from '../arcgis/service-name.js';
import { changeFileOf, type ChangeFile, type ChangeList } from '../arcgis-request/change-file.js';
import { openChanges, type EsriFeature } from '../arcgis-request/extract-changes.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { GeohookError } from '../errors.js';
import { parseScope } from '../events/tracked-ranges.js';
import { changesPreviousKey } from '../redis/keys.js';
import {
  deleteEvent,
  listRank,
  objectIdOf,
  rowEvent,
  schemaEvent,
  type BuiltChange,
  type RangeContext,
  type TrackedFields,
} from './build-change-events.js';
import type { ChangeEvent, ChangeSource } from './change-event.js';
import { readServiceLayers, type LayerInfo } from './layer-info.js';
import type { PreviousValues, PreviousValuesStore, PreviousValuesWrite } from './previous-values.js';
import { readCurrentRows } from './read-current-rows.js';

/** A range to resolve: a scope's generations in `(from, to]`, at its service. */
export interface RangeToResolve {
  hook: string;
  scope: string;
  serviceUrl: URL;
  from: number;
  to: number;
}

/** What resolving a range needs besides the range. */
export interface ResolveContext {
  session: ServiceSession;
  previous: PreviousValuesStore;
  prefix: string;
  track: TrackedFields;
  origin: ChangeSource['origin'];
  /** The ArcGIS Online organization, when the service is one of its. */
  orgId?: string;
  /** The layers followed; every one when undefined. */
  layers?: readonly number[];
  /** Each layer's field names as last resolved, by layer scope (`<scope>#<layer>`); none for a layer never resolved. */
  knownSchemas: (layerScopes: string[]) => Promise<(string[] | undefined)[]>;
}

/** Change events `[from, to)` of a range, and what the previous-values store learns from them, by key. */
export interface RangeBatch {
  events: ChangeEvent[];
  writes: { key: string; writes: PreviousValuesWrite[] }[];
}

/** A range opened for reading: how many change events it holds, read a batch at a time in transaction order. */
export interface OpenedRange {
  /** Every change event of the range: `transaction.total`. */
  total: number;
  /** Events `[from, to)`, built with the previous values kept now. */
  events(from: number, to: number): Promise<RangeBatch>;
  /** Each layer's field names as now read, by the layer's previous-values scope (`<scope>#<layer>`). */
  schemas: Map<string, string[]>;
  /** A server that answers ids only is read up to now: the generation it was read to, where the next range starts. */
  readUpTo?: number;
  /** Lets go of the change file. */
  close(): Promise<void>;
}

/** A run of the transaction: a layer's `change.schema`, or one list of its creates, updates or deletes. */
type SchemaSegment = { layer: LayerInfo; length: 1; schema: { added: string[]; removed: string[] } };
type ListSegment = { layer: LayerInfo; length: number; op: 'c' | 'u' | 'd'; list: number };
type Segment = SchemaSegment | ListSegment;

const OP_OF_LIST: Readonly<Partial<Record<ChangeList['kind'], 'c' | 'u' | 'd'>>> = { adds: 'c', updates: 'u', deleteIds: 'd' };

const isFeature = (value: unknown): value is EsriFeature =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as EsriFeature).attributes === 'object' &&
  (value as EsriFeature).attributes !== null;

/** A layer's own scope: the scope's on ArcGIS Online (one layer), else `<scope>#<layer>`. */
export const layerScopeOf = (scope: string, layerId: number): string =>
  parseScope(scope).layerId === undefined ? `${scope}#${layerId}` : scope;

/** The key of a layer's previous values. */
const previousKeyOf = (prefix: string, scope: string, layerId: number): string => changesPreviousKey(prefix, layerScopeOf(scope, layerId));

/** The layers' schema changes since geohook last read them: the fields added and removed. */
function schemaChangesOf(layers: readonly LayerInfo[], known: (string[] | undefined)[]): SchemaSegment[] {
  return layers.flatMap((layer, index): SchemaSegment[] => {
    const before = known[index];
    const now = layer.fields.map((field) => field.name).sort();
    if (before === undefined || before.join(',') === now.join(',')) return [];
    return [
      {
        layer,
        length: 1,
        schema: { added: now.filter((name) => !before.includes(name)), removed: before.filter((name) => !now.includes(name)) },
      },
    ];
  });
}

/**
 * Opens one range (docs/changes.md#how-it-works): reads the service's layers, asks `extractChanges` for every
 * change in the range (every list, the scope's layers, asynchronously) and downloads the result to a file as it
 * comes, indexed; events are then built a batch at a time from it, BigInteger values read exactly. A server whose
 * `extractChanges` answers ids only gives the ids, and the rows are read with `query`: the current state, flagged
 * `asOf: 'current'`.
 */
export async function openRange(range: RangeToResolve, context: ResolveContext): Promise<OpenedRange> {
  const { service, layerId } = parseScope(range.scope);
  const { layers, returnsRows } = await readServiceLayers(context.session, range.serviceUrl);
  const ids = layerId === undefined ? layers.map((layer) => layer.id).filter((id) => context.layers?.includes(id) ?? true) : [layerId];
  const scoped = layers.filter((layer) => ids.includes(layer.id));
  const url = new URL(`${range.serviceUrl.href.replace(/\/+$/, '')}/extractChanges`);
  url.search = new URLSearchParams({
    serverGens: `[${range.from},${range.to}]`,
    layers: `[${ids.join(',')}]`,
    returnInserts: 'true',
    returnUpdates: 'true',
    returnDeletes: 'true',
    returnAttachments: 'false',
    async: 'true',
  }).toString();
  let file: ChangeFile;
  let readUpTo: number | undefined;
  if (returnsRows) file = await openChanges(context.session, url);
  else {
    const read = await readCurrentRows(context.session, range.serviceUrl, scoped, range.from);
    file = changeFileOf({ edits: read.edits.map(({ id, features }) => ({ id, features })) });
    readUpTo = read.readUpTo;
  }
  try {
    const known = await context.knownSchemas(scoped.map((layer) => layerScopeOf(range.scope, layer.id)));
    const lists = file.lists.flatMap((list, index): ListSegment[] => {
      const layer = scoped.find(({ id }) => id === list.layerId);
      const op = OP_OF_LIST[list.kind];
      return layer === undefined || op === undefined || list.length === 0 ? [] : [{ layer, length: list.length, op, list: index }];
    });
    const segments = [...schemaChangesOf(scoped, known), ...lists.sort((a, b) => listRank(a.layer, a.op) - listRank(b.layer, b.op))];
    const { folder, name } = parseServiceName(service);
    const rangeContext: RangeContext = {
      hook: range.hook,
      serviceName: service,
      service: {
        ...(folder === undefined ? {} : { folderName: folder }),
        serviceName: name,
        serviceType: 'FeatureServer',
        url: range.serviceUrl.href,
        ...(context.orgId === undefined ? {} : { orgId: context.orgId }),
      },
      serverGens: [range.from, range.to],
      track: context.track,
      now: new Date(),
      ...(returnsRows ? {} : { asOf: 'current' as const }),
    };
    const total = segments.reduce((sum, segment) => sum + segment.length, 0);
    const source = (index: number): ChangeSource => ({
      origin: context.origin,
      serverGens: [range.from, range.to],
      transaction: { id: createHash('sha256').update(`${range.scope}\n${range.from}\n${range.to}`).digest('hex'), index, total },
    });
    return {
      total,
      events: (from, to) => readBatch({ file, segments, rangeContext, context, scope: range.scope, source }, from, to),
      schemas: new Map(scoped.map((layer) => [layerScopeOf(range.scope, layer.id), layer.fields.map((field) => field.name).sort()])),
      ...(readUpTo === undefined ? {} : { readUpTo }),
      close: () => file.close(),
    };
  } catch (err) {
    await file.close();
    throw err;
  }
}

/** What reading a batch of a range needs. */
interface BatchSource {
  file: ChangeFile;
  segments: readonly Segment[];
  rangeContext: RangeContext;
  context: ResolveContext;
  scope: string;
  source: (index: number) => ChangeSource;
}

/** Events `[from, to)` of an opened range: their rows read from the file, the previous values of their features from Redis. */
async function readBatch(batch: BatchSource, from: number, to: number): Promise<RangeBatch> {
  const { file, segments, rangeContext, context, scope } = batch;
  const items: { segment: Segment; element: unknown }[] = [];
  let offset = 0;
  for (const segment of segments) {
    const start = Math.max(from, offset) - offset;
    const end = Math.min(to, offset + segment.length) - offset;
    offset += segment.length;
    if (start >= end) continue;
    if ('schema' in segment) items.push({ segment, element: undefined });
    else for (const element of await file.read(segment.list, start, end)) items.push({ segment, element });
  }
  // The previous values of the features updated and deleted, one read per layer.
  const asked = new Map<number, (number | string)[]>();
  for (const { segment, element } of items) {
    if (!('op' in segment) || segment.op === 'c') continue;
    const id = segment.op === 'd' ? element : isFeature(element) ? element.attributes[segment.layer.objectIdField] : undefined;
    if (typeof id !== 'number' && typeof id !== 'string') continue;
    if (!asked.has(segment.layer.id)) asked.set(segment.layer.id, []);
    asked.get(segment.layer.id)!.push(id);
  }
  const previous = new Map<number, Map<number | string, PreviousValues>>();
  for (const [layerId, ids] of asked)
    previous.set(layerId, await context.previous.read(previousKeyOf(context.prefix, scope, layerId), ids));

  const events: ChangeEvent[] = [];
  const writes = new Map<number, PreviousValuesWrite[]>();
  for (const [position, { segment, element }] of items.entries()) {
    const { layer } = segment;
    let built: BuiltChange;
    if ('schema' in segment) built = schemaEvent(rangeContext, layer, segment.schema);
    else if (segment.op === 'd') {
      if (typeof element !== 'number' && typeof element !== 'string')
        throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `a deleted id of layer ${layer.id} is neither a number nor a string`);
      built = deleteEvent(rangeContext, layer, element, previous.get(layer.id)?.get(element));
    } else {
      if (!isFeature(element)) throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `a changed row of layer ${layer.id} has no attributes`);
      const known = segment.op === 'u' ? previous.get(layer.id)?.get(objectIdOf(layer, element)) : undefined;
      built = rowEvent(rangeContext, layer, segment.op, element, known);
    }
    events.push({ ...built.event, source: batch.source(from + position) });
    if (built.write === undefined) continue;
    if (!writes.has(layer.id)) writes.set(layer.id, []);
    writes.get(layer.id)!.push(built.write);
  }
  return { events, writes: [...writes].map(([layerId, list]) => ({ key: previousKeyOf(context.prefix, scope, layerId), writes: list })) };
}
