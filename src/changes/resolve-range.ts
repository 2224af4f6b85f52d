import { createHash } from 'node:crypto';
import { changeFileOf, type ChangeFile } from '../arcgis-request/change-file.js';
import { openChanges } from '../arcgis-request/extract-changes.js';
import { readServiceLayers } from '../arcgis-request/layer-info.js';
import { readCurrentRows } from '../arcgis-request/read-current-rows.js';
import { parseScope } from '../events/tracked-ranges.js';
import { deletedAttachments, readAttachmentLists, readRangeAttachments } from './attachment-changes.js';
import { attachmentOnlySegments } from './attachment-only-segments.js';
import { listRank, type RangeContext } from './build-change-events.js';
import type { ChangeSource } from './change-event.js';
import { layerFilterOf, type LayerFilter } from './change-filter.js';
import { changeServiceOf } from './change-service.js';
import { layerScopeOf } from './layer-scope.js';
import { pushDown } from './push-down-filters.js';
import { keepPassing, OP_OF_LIST, schemaChangesOf, type ListSegment } from './range-segments.js';
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
    const transaction = createHash('sha256').update(`${range.scope}\n${range.from}\n${range.to}`).digest('hex');
    const source = (index: number): ChangeSource => ({
      origin: context.origin,
      serverGens: [range.from, range.to],
      transaction: { id: transaction, index, total },
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
