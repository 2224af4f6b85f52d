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

/** Events `[from, to)` of an opened range: their rows read from the file, the previous values of their features from Redis. */
export async function readBatch(batch: BatchSource, from: number, to: number): Promise<RangeBatch> {
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
