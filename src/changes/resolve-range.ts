import { createHash } from 'node:crypto';
import { changeFileOf, type ChangeFile, type ChangeList } from '../arcgis-request/change-file.js';
import { openChanges, type EsriFeature } from '../arcgis-request/extract-changes.js';
import { readServiceLayers, type LayerInfo } from '../arcgis-request/layer-info.js';
import { parseExactJson } from '../arcgis-request/parse-exact-json.js';
import { readCurrentRows } from '../arcgis-request/read-current-rows.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import type { ChangeFilters } from '../config/types.js';
import { GeohookError } from '../errors.js';
import { parseScope } from '../events/tracked-ranges.js';
import { changesPreviousKey } from '../redis/keys.js';
import {
  attachmentsOf,
  attachmentsVersion,
  changedParents,
  deletedAttachments,
  entryLinkOf,
  normalizeGuid,
  readAttachmentLists,
  readRangeAttachments,
  type AttachmentLinkOf,
  type AttachmentParents,
  type LayerAttachmentChanges,
  type RangeAttachments,
} from './attachment-changes.js';
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
import { changeEventId, type ChangeEvent, type ChangeSource } from './change-event.js';
import { layerFilterOf, type LayerFilter } from './change-filter.js';
import { changeServiceOf } from './change-service.js';
import type { PreviousValues, PreviousValuesStore, PreviousValuesWrite } from './previous-values.js';

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
  /** The service's filters: pushed down to `extractChanges` where the server can, evaluated here where it cannot. */
  filters?: ChangeFilters;
  /**
   * `metadata`: creates and updates carry their feature's attachment changes in the range; `link`: each with the URL
   * `attachmentLink` makes. @defaultValue 'none'
   */
  attachments?: 'none' | 'metadata' | 'link';
  /** With `attachments: "link"`: makes an attachment's signed geohook URL. */
  attachmentLink?: AttachmentLinkOf;
  /** Ask for the attachment changes, for {@link OpenedRange.attachmentChanges} (the mirror), whatever `attachments` says. */
  attachmentLists?: boolean;
  /** Where the parents of attachments are kept, by the layer's previous-values scope (`<scope>#<layer>`). */
  attachmentParents?: (layerScope: string) => AttachmentParents;
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
  /** The layers of the range, as now read (relay routes' `where` clauses read their fields). */
  layers: readonly LayerInfo[];
  /** A server that answers ids only is read up to now: the generation it was read to, where the next range starts. */
  readUpTo?: number;
  /** The range's attachment changes by layer; none when they were not asked for or the server cannot give them. */
  attachmentChanges(): Promise<Map<number, LayerAttachmentChanges>>;
  /** Once its events are written: the parents of the attachments it deleted are forgotten. */
  forgetDeletedAttachments(): Promise<void>;
  /** Lets go of the change file. */
  close(): Promise<void>;
}

/** A run of the transaction: a layer's `change.schema`, or one list of its creates, updates or deletes. */
type SchemaSegment = { layer: LayerInfo; length: 1; schema: { added: string[]; removed: string[] } };
type ListSegment = {
  layer: LayerInfo;
  length: number;
  op: 'c' | 'u' | 'd';
  list: number;
  /** Filtered here: the positions in the list of the rows that pass, `length` of them. */
  kept?: number[];
  /** Features whose attachments alone changed: their rows as read now with `query`, not from the file. */
  rows?: unknown[];
};

/** Rows read at once when a filter is evaluated here. */
const FILTER_CHUNK = 2000;
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
  const { layers, returnsRows, supportsLayerQueries, supportsGeometry, supportsReturnAttachments } = await readServiceLayers(
    context.session,
    range.serviceUrl,
  );
  // A payload's changesUrl asks for no attachments: geohook asks for them itself, by URL, when the service's settings want them.
  const inEvents = (context.attachments ?? 'none') !== 'none';
  const withAttachments = (inEvents || context.attachmentLists === true) && returnsRows && supportsReturnAttachments;
  const ids = layerId === undefined ? layers.map((layer) => layer.id).filter((id) => context.layers?.includes(id) ?? true) : [layerId];
  const scoped = layers.filter((layer) => ids.includes(layer.id));
  const filters = new Map<number, LayerFilter>();
  for (const layer of scoped) {
    const filter = layerFilterOf(context.filters, layer);
    if (filter !== undefined) filters.set(layer.id, filter);
  }
  const pushed = pushDown(context.filters, scoped, filters, { returnsRows, supportsLayerQueries, supportsGeometry });
  const url = new URL(`${range.serviceUrl.href.replace(/\/+$/, '')}/extractChanges`);
  url.search = new URLSearchParams({
    serverGens: `[${range.from},${range.to}]`,
    layers: `[${ids.join(',')}]`,
    returnInserts: 'true',
    returnUpdates: 'true',
    returnDeletes: 'true',
    returnAttachments: String(withAttachments),
    ...(withAttachments ? { returnAttachmentsDataByUrl: 'true' } : {}),
    async: 'true',
    ...pushed.params,
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
    for (const segment of lists) {
      const filter = filters.get(segment.layer.id);
      if (segment.op !== 'd' && filter !== undefined && !pushed.layers.has(segment.layer.id)) await keepPassing(file, segment, filter);
    }
    const segments = [...schemaChangesOf(scoped, known), ...lists.sort((a, b) => listRank(a.layer, a.op) - listRank(b.layer, b.op))];
    const rangeContext: RangeContext = {
      hook: range.hook,
      serviceName: service,
      service: changeServiceOf(service, range.serviceUrl, context.orgId),
      serverGens: [range.from, range.to],
      track: context.track,
      now: new Date(),
      ...(returnsRows ? {} : { asOf: 'current' as const }),
    };
    const parentsOf = context.attachmentParents;
    const attachments =
      withAttachments && inEvents && parentsOf !== undefined
        ? await readRangeAttachments(file, {
            record: (layerId, entries) => parentsOf(layerScopeOf(range.scope, layerId)).record(layerId, entries),
            read: (layerId, globalIds) => parentsOf(layerScopeOf(range.scope, layerId)).read(layerId, globalIds),
            forget: (layerId, globalIds) => parentsOf(layerScopeOf(range.scope, layerId)).forget(layerId, globalIds),
          })
        : undefined;
    if (attachments !== undefined)
      segments.push(...(await attachmentOnlySegments(context.session, range.serviceUrl, file, scoped, attachments)));
    const total = segments.reduce((sum, segment) => sum + segment.length, 0);
    const source = (index: number): ChangeSource => ({
      origin: context.origin,
      serverGens: [range.from, range.to],
      transaction: { id: createHash('sha256').update(`${range.scope}\n${range.from}\n${range.to}`).digest('hex'), index, total },
    });
    return {
      total,
      events: (from, to) =>
        readBatch(
          { file, segments, rangeContext, context, scope: range.scope, source, ...(attachments === undefined ? {} : { attachments }) },
          from,
          to,
        ),
      schemas: new Map(scoped.map((layer) => [layerScopeOf(range.scope, layer.id), layer.fields.map((field) => field.name).sort()])),
      layers: scoped,
      ...(readUpTo === undefined ? {} : { readUpTo }),
      attachmentChanges: async () => (withAttachments ? readAttachmentLists(file) : new Map()),
      forgetDeletedAttachments: async () => {
        if (attachments === undefined || parentsOf === undefined) return;
        for (const [layerId, globalIds] of deletedAttachments(attachments))
          await parentsOf(layerScopeOf(range.scope, layerId)).forget(layerId, globalIds);
      },
      close: () => file.close(),
    };
  } catch (err) {
    await file.close();
    throw err;
  }
}

/**
 * What `extractChanges` is asked to filter: the clauses as `layerQueries` when the server takes them, the envelope
 * as `geometry` when it takes it and every layer read has geometry (the server would leave a table's rows out).
 * `layers` are those the server filters whole; the others are filtered here.
 */
function pushDown(
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

/** Filters a list here: reads it a chunk at a time and keeps the positions of the rows that pass (and of anything not a row, which fails its range when read). */
async function keepPassing(file: ChangeFile, segment: ListSegment, filter: LayerFilter): Promise<void> {
  const kept: number[] = [];
  for (let start = 0; start < segment.length; start += FILTER_CHUNK) {
    const rows = await file.read(segment.list, start, Math.min(start + FILTER_CHUNK, segment.length));
    rows.forEach((row, index) => {
      if (!isFeature(row) || filter.test(row)) kept.push(start + index);
    });
  }
  segment.kept = kept;
  segment.length = kept.length;
}

/** The elements of a list at ascending `positions`, read in runs of at most {@link FILTER_CHUNK} elements. */
async function readPositions(file: ChangeFile, list: number, positions: readonly number[]): Promise<unknown[]> {
  const found: unknown[] = [];
  for (let first = 0; first < positions.length;) {
    let last = first;
    while (last + 1 < positions.length && positions[last + 1]! - positions[first]! < FILTER_CHUNK) last += 1;
    const rows = await file.read(list, positions[first]!, positions[last]! + 1);
    for (let at = first; at <= last; at += 1) found.push(rows[positions[at]! - positions[first]!]);
    first = last + 1;
  }
  return found;
}

/**
 * The features whose attachments changed in the range and nothing else (the rows of no list): an update each, its
 * row read now with `query` (by GlobalID), after the range's deletes. A feature no longer there has none.
 */
async function attachmentOnlySegments(
  session: ServiceSession,
  serviceUrl: URL,
  file: ChangeFile,
  scoped: readonly LayerInfo[],
  attachments: RangeAttachments,
): Promise<ListSegment[]> {
  const segments: ListSegment[] = [];
  for (const layer of scoped) {
    const field = layer.globalIdField;
    const wanted = changedParents(attachments)
      .filter(({ layerId }) => layerId === layer.id)
      .map(({ globalId }) => globalId);
    if (field === undefined || wanted.length === 0) continue;
    const inLists = new Set<string>();
    for (const [index, list] of file.lists.entries()) {
      if (list.layerId !== layer.id || OP_OF_LIST[list.kind] === undefined || list.length === 0) continue;
      for (const element of await file.read(index, 0, list.length)) {
        const id = isFeature(element) ? element.attributes[field] : element;
        const guid = normalizeGuid(id);
        if (guid !== undefined) inLists.add(guid);
      }
    }
    const alone = wanted.filter((globalId) => !inLists.has(globalId));
    if (alone.length === 0) continue;
    const url = new URL(`${serviceUrl.href.replace(/\/+$/, '')}/${layer.id}/query`);
    url.search = new URLSearchParams({
      where: `${field} IN (${alone.map((globalId) => `'${globalId}'`).join(',')})`,
      outFields: '*',
      returnGeometry: 'true',
      f: 'json',
    }).toString();
    const answer = await session.read(url, undefined, parseExactJson);
    const rows = Array.isArray(answer.features) ? (answer.features as unknown[]) : [];
    if (rows.length > 0) segments.push({ layer, length: rows.length, op: 'u', list: -1, rows });
  }
  return segments;
}

/** What reading a batch of a range needs. */
interface BatchSource {
  file: ChangeFile;
  segments: readonly Segment[];
  rangeContext: RangeContext;
  context: ResolveContext;
  scope: string;
  source: (index: number) => ChangeSource;
  /** With `attachments: "metadata"` or `"link"`: the range's attachment changes by parent. */
  attachments?: RangeAttachments;
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
    else if (segment.rows !== undefined) for (const element of segment.rows.slice(start, end)) items.push({ segment, element });
    else if (segment.kept !== undefined)
      for (const element of await readPositions(file, segment.list, segment.kept.slice(start, end))) items.push({ segment, element });
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
      const alone = 'rows' in segment && segment.rows !== undefined;
      built = rowEvent(alone ? { ...rangeContext, asOf: 'current' } : rangeContext, layer, segment.op, element, known);
      if (batch.attachments !== undefined) {
        const link =
          context.attachments === 'link' && context.attachmentLink !== undefined
            ? entryLinkOf(context.attachmentLink, rangeContext.serviceName, layer.id)
            : undefined;
        const changed = await attachmentsOf(context.session, batch.attachments, layer.id, built.event.key, link);
        if (changed !== undefined) built.event.attachments = changed;
        // Its row did not change: its version is its attachment changes'.
        if (alone && changed !== undefined) {
          const key = built.event.key.globalId ?? `o${String(built.event.key.objectId)}`;
          const version = attachmentsVersion(changed);
          built.event.id = changeEventId({
            hook: rangeContext.hook,
            service: rangeContext.serviceName,
            layerId: layer.id,
            key,
            op: 'u',
            version,
          });
        }
      }
    }
    events.push({ ...built.event, source: batch.source(from + position) });
    if (built.write === undefined) continue;
    if (!writes.has(layer.id)) writes.set(layer.id, []);
    writes.get(layer.id)!.push(built.write);
  }
  return { events, writes: [...writes].map(([layerId, list]) => ({ key: previousKeyOf(context.prefix, scope, layerId), writes: list })) };
}
