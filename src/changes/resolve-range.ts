import { createHash } from 'node:crypto';
import { changeFileOf, type ChangeFile } from '../arcgis-request/change-file.js';
import { openChanges } from '../arcgis-request/extract-changes.js';
import { readServiceLayers, type LayerInfo, type ServiceLayers } from '../arcgis-request/layer-info.js';
import { readCurrentRows } from '../arcgis-request/read-current-rows.js';
import { parseScope } from '../events/tracked-ranges.js';
import {
  deletedAttachments,
  readAttachmentLists,
  readRangeAttachments,
  type AttachmentParents,
  type RangeAttachments,
} from './attachment-changes.js';
import { attachmentOnlySegments } from './attachment-only-segments.js';
import { listRank, type RangeContext } from './build-change-events.js';
import type { ChangeSource } from './change-event.js';
import { layerFilterOf, type LayerFilter } from './change-filter.js';
import { changeServiceOf } from './change-service.js';
import { layerScopeOf } from './layer-scope.js';
import { pushDown } from './push-down-filters.js';
import { keepPassing, OP_OF_LIST, schemaChangesOf, type ListSegment, type Segment } from './range-segments.js';
import { readBatch } from './read-range-batch.js';
import type { OpenedRange, RangeToResolve, ResolveContext } from './resolve-range-types.js';

export type { OpenedRange, RangeBatch, RangeToResolve, ResolveContext } from './resolve-range-types.js';

/**
 * Opens one range (docs/changes.md#how-it-works): reads the service's layers, asks `extractChanges` for every
 * change in the range (every list, the scope's layers, asynchronously) and downloads the result to a file as it
 * comes, indexed; events are then built a batch at a time from it, BigInteger values read exactly. A server whose
 * `extractChanges` answers ids only gives the ids, and the rows are read with `query`: the current state, flagged
 * `asOf: 'current'`.
 */
export async function openRange(range: RangeToResolve, context: ResolveContext): Promise<OpenedRange> {
  const { service, layerId } = parseScope(range.scope);
  const server = await readServiceLayers(context.session, range.serviceUrl);
  // A payload's changesUrl asks for no attachments: geohook asks for them itself, by URL, when the service's settings want them.
  const inEvents = (context.attachments ?? 'none') !== 'none';
  const withAttachments = (inEvents || context.attachmentLists === true) && server.returnsRows && server.supportsReturnAttachments;
  const ids =
    layerId === undefined ? server.layers.map((layer) => layer.id).filter((id) => context.layers?.includes(id) ?? true) : [layerId];
  const scoped = server.layers.filter((layer) => ids.includes(layer.id));
  const filters = layerFiltersOf(context, scoped);
  const pushed = pushDown(context.filters, scoped, filters, server);
  const { file, readUpTo } = await openChangeFile(
    range,
    context,
    server,
    scoped,
    extractChangesUrl(range, ids, withAttachments, pushed.params),
  );
  try {
    const segments = await listedSegments(range, context, file, scoped, filters, pushed.layers);
    const rangeContext = rangeContextOf(range, service, context, server.returnsRows);
    const parents = context.attachmentParents === undefined ? undefined : parentsOfRange(range.scope, context.attachmentParents);
    const attachments = withAttachments && inEvents && parents !== undefined ? await readRangeAttachments(file, parents) : undefined;
    if (attachments !== undefined)
      segments.push(...(await attachmentOnlySegments(context.session, range.serviceUrl, file, scoped, attachments)));
    const total = segments.reduce((sum, segment) => sum + segment.length, 0);
    const source = sourceOf(range, context.origin, total);
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
      forgetDeletedAttachments: () => forgetDeleted(attachments, parents),
      close: () => file.close(),
    };
  } catch (err) {
    await file.close();
    throw err;
  }
}

/** Each scoped layer's filter from the service's settings; none for a layer they leave alone. */
function layerFiltersOf(context: ResolveContext, scoped: readonly LayerInfo[]): Map<number, LayerFilter> {
  const filters = new Map<number, LayerFilter>();
  for (const layer of scoped) {
    const filter = layerFilterOf(context.filters, layer);
    if (filter !== undefined) filters.set(layer.id, filter);
  }
  return filters;
}

/** The `extractChanges` request of the range: every list of the layers `ids`, asynchronously, with the filters pushed down. */
function extractChangesUrl(range: RangeToResolve, ids: readonly number[], withAttachments: boolean, pushed: Record<string, string>): URL {
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
    ...pushed,
  }).toString();
  return url;
}

/** The range's change file: `extractChanges`' answer, or the current rows read with `query` from a server that answers ids only. */
async function openChangeFile(
  range: RangeToResolve,
  context: ResolveContext,
  server: ServiceLayers,
  scoped: readonly LayerInfo[],
  url: URL,
): Promise<{ file: ChangeFile; readUpTo: number | undefined }> {
  if (server.returnsRows) return { file: await openChanges(context.session, url), readUpTo: undefined };
  const read = await readCurrentRows(context.session, range.serviceUrl, scoped, range.from);
  return { file: changeFileOf({ edits: read.edits.map(({ id, features }) => ({ id, features })) }), readUpTo: read.readUpTo };
}

/**
 * The transaction's runs before any attachment-only update: each layer's schema change, then its lists in event order,
 * filtered here by their layer's filter unless the server applied it (`pushedDown`); deletes are never filtered.
 */
async function listedSegments(
  range: RangeToResolve,
  context: ResolveContext,
  file: ChangeFile,
  scoped: readonly LayerInfo[],
  filters: ReadonlyMap<number, LayerFilter>,
  pushedDown: ReadonlySet<number>,
): Promise<Segment[]> {
  const known = await context.knownSchemas(scoped.map((layer) => layerScopeOf(range.scope, layer.id)));
  const lists = file.lists.flatMap((list, index): ListSegment[] => {
    const layer = scoped.find(({ id }) => id === list.layerId);
    const op = OP_OF_LIST[list.kind];
    return layer === undefined || op === undefined || list.length === 0 ? [] : [{ layer, length: list.length, op, list: index }];
  });
  for (const segment of lists) {
    const filter = filters.get(segment.layer.id);
    if (segment.op !== 'd' && filter !== undefined && !pushedDown.has(segment.layer.id)) await keepPassing(file, segment, filter);
  }
  return [...schemaChangesOf(scoped, known), ...lists.sort((a, b) => listRank(a.layer, a.op) - listRank(b.layer, b.op))];
}

/** What every event of the range shares: its hook, service and generations, `asOf: 'current'` from a server that answers ids only. */
function rangeContextOf(range: RangeToResolve, service: string, context: ResolveContext, returnsRows: boolean): RangeContext {
  return {
    hook: range.hook,
    serviceName: service,
    service: changeServiceOf(service, range.serviceUrl, context.orgId),
    serverGens: [range.from, range.to],
    track: context.track,
    now: new Date(),
    ...(returnsRows ? {} : { asOf: 'current' as const }),
  };
}

/** The parents of the range's attachments, each layer's kept under its previous-values scope. */
function parentsOfRange(scope: string, parentsOf: (layerScope: string) => AttachmentParents): AttachmentParents {
  return {
    record: (layerId, entries) => parentsOf(layerScopeOf(scope, layerId)).record(layerId, entries),
    read: (layerId, globalIds) => parentsOf(layerScopeOf(scope, layerId)).read(layerId, globalIds),
    forget: (layerId, globalIds) => parentsOf(layerScopeOf(scope, layerId)).forget(layerId, globalIds),
  };
}

/** The source of the range's event at `index`: one transaction of `total` events, its id the range's digest. */
function sourceOf(range: RangeToResolve, origin: ChangeSource['origin'], total: number): (index: number) => ChangeSource {
  const transaction = createHash('sha256').update(`${range.scope}\n${range.from}\n${range.to}`).digest('hex');
  return (index) => ({ origin, serverGens: [range.from, range.to], transaction: { id: transaction, index, total } });
}

/** Forgets the parents of the attachments the range deleted, once its events are written. */
async function forgetDeleted(attachments: RangeAttachments | undefined, parents: AttachmentParents | undefined): Promise<void> {
  if (attachments === undefined || parents === undefined) return;
  for (const [layerId, globalIds] of deletedAttachments(attachments)) await parents.forget(layerId, globalIds);
}
