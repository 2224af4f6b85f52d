import type { ChangeFile } from '../arcgis-request/change-file.js';
import { GeohookError } from '../errors.js';
import { attachmentsOf, attachmentsVersion, entryLinkOf, type RangeAttachments } from './attachment-changes.js';
import { deleteEvent, objectIdOf, rowEvent, schemaEvent, type BuiltChange, type RangeContext } from './build-change-events.js';
import { changeEventId, type ChangeEvent, type ChangeSource } from './change-event.js';
import { previousKeyOf } from './layer-scope.js';
import type { PreviousValues, PreviousValuesWrite } from './previous-values.js';
import { isFeature, readPositions, type Segment } from './range-segments.js';
import type { RangeBatch, ResolveContext } from './resolve-range-types.js';

/** What reading a batch of a range needs. */
export interface BatchSource {
  file: ChangeFile;
  segments: readonly Segment[];
  rangeContext: RangeContext;
  context: ResolveContext;
  scope: string;
  source: (index: number) => ChangeSource;
  /** With `attachments: "metadata"` or `"link"`: the range's attachment changes by parent. */
  attachments?: RangeAttachments;
}

/** An element of the batch: a row, a deleted id, or nothing for a schema change, with the run it belongs to. */
interface BatchItem {
  segment: Segment;
  element: unknown;
}

/** Previous values of the batch's features, by layer and object id. */
type PreviousByLayer = Map<number, Map<number | string, PreviousValues>>;

/** Events `[from, to)` of an opened range: their rows read from the file, the previous values of their features from Redis. */
export async function readBatch(batch: BatchSource, from: number, to: number): Promise<RangeBatch> {
  const items = await readItems(batch.file, batch.segments, from, to);
  const previous = await readPrevious(batch, items);
  const events: ChangeEvent[] = [];
  const writes = new Map<number, PreviousValuesWrite[]>();
  for (const [position, item] of items.entries()) {
    const built = await buildChange(batch, item, previous);
    events.push({ ...built.event, source: batch.source(from + position) });
    if (built.write === undefined) continue;
    const layerId = item.segment.layer.id;
    if (!writes.has(layerId)) writes.set(layerId, []);
    writes.get(layerId)!.push(built.write);
  }
  const { context, scope } = batch;
  return { events, writes: [...writes].map(([layerId, list]) => ({ key: previousKeyOf(context.prefix, scope, layerId), writes: list })) };
}

/** The elements `[from, to)` of the transaction, each read from where its run keeps it. */
async function readItems(file: ChangeFile, segments: readonly Segment[], from: number, to: number): Promise<BatchItem[]> {
  const items: BatchItem[] = [];
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
  return items;
}

/** The previous values of the features updated and deleted, one read per layer. */
async function readPrevious(batch: BatchSource, items: readonly BatchItem[]): Promise<PreviousByLayer> {
  const asked = new Map<number, (number | string)[]>();
  for (const { segment, element } of items) {
    if (!('op' in segment) || segment.op === 'c') continue;
    const id = segment.op === 'd' ? element : isFeature(element) ? element.attributes[segment.layer.objectIdField] : undefined;
    if (typeof id !== 'number' && typeof id !== 'string') continue;
    if (!asked.has(segment.layer.id)) asked.set(segment.layer.id, []);
    asked.get(segment.layer.id)!.push(id);
  }
  const { context, scope } = batch;
  const previous: PreviousByLayer = new Map();
  for (const [layerId, ids] of asked)
    previous.set(layerId, await context.previous.read(previousKeyOf(context.prefix, scope, layerId), ids));
  return previous;
}

/** The change event of one element: a schema change, a delete, or a created or updated row. */
async function buildChange(batch: BatchSource, { segment, element }: BatchItem, previous: PreviousByLayer): Promise<BuiltChange> {
  const { layer } = segment;
  if ('schema' in segment) return schemaEvent(batch.rangeContext, layer, segment.schema);
  if (segment.op === 'd') {
    if (typeof element !== 'number' && typeof element !== 'string')
      throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `a deleted id of layer ${layer.id} is neither a number nor a string`);
    return deleteEvent(batch.rangeContext, layer, element, previous.get(layer.id)?.get(element));
  }
  if (!isFeature(element)) throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `a changed row of layer ${layer.id} has no attributes`);
  const known = segment.op === 'u' ? previous.get(layer.id)?.get(objectIdOf(layer, element)) : undefined;
  const alone = 'rows' in segment && segment.rows !== undefined;
  const built = rowEvent(alone ? { ...batch.rangeContext, asOf: 'current' } : batch.rangeContext, layer, segment.op, element, known);
  if (batch.attachments !== undefined) await addAttachments(batch, batch.attachments, layer.id, built.event, alone);
  return built;
}

/**
 * Puts its feature's attachment changes in the range on a row's event (with their links under `attachments: "link"`);
 * the event of a feature whose attachments `alone` changed is versioned by them, its row being unchanged.
 */
async function addAttachments(
  batch: BatchSource,
  found: RangeAttachments,
  layerId: number,
  event: BuiltChange['event'],
  alone: boolean,
): Promise<void> {
  const { context, rangeContext } = batch;
  const link =
    context.attachments === 'link' && context.attachmentLink !== undefined
      ? entryLinkOf(context.attachmentLink, rangeContext.serviceName, layerId)
      : undefined;
  const changed = await attachmentsOf(context.session, found, layerId, event.key, link);
  if (changed === undefined) return;
  event.attachments = changed;
  if (!alone) return;
  const key = event.key.globalId ?? `o${String(event.key.objectId)}`;
  event.id = changeEventId({
    hook: rangeContext.hook,
    service: rangeContext.serviceName,
    layerId,
    key,
    op: 'u',
    version: attachmentsVersion(changed),
  });
}
