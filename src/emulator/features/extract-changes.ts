import { AdminError } from '../admin-error.js';
import type { Attachment } from './attachments.js';
import type { ChangeEntry, Row } from './change-log.js';
import { SYNC_MODEL_MISMATCH, type ExtractRequest } from './extract-request.js';
import type { FeatureLayer } from './feature-layer.js';
import type { FeatureStore, ServiceFeatures } from './feature-store.js';
import { intersectsEnvelope, normalizeWkid, project } from './geometry.js';
import type { Envelope, Geometry } from './types.js';
import { compileWhere } from './where.js';

/** One layer's net changes over a range: rows as of the range's end; deletes by object id or GlobalID. */
export interface LayerChanges {
  id: number;
  layer: FeatureLayer;
  adds: Row[] | undefined;
  updates: Row[] | undefined;
  deletes: (number | string)[] | undefined;
  /** With `returnAttachments`, on a layer with attachments: their net changes; deletes by GlobalID. */
  attachments?: { adds: Attachment[]; updates: Attachment[]; deletes: string[] };
}

/** An `extractChanges` answer before it is written: the layers' generations and their changes. */
export interface ChangesAnswer {
  layerServerGens: { id: number; serverGen: number }[];
  layers: LayerChanges[];
  /** The spatial reference rows are written in, when it is not the layer's. */
  outSR: number | undefined;
  idsOnly: boolean;
  extentOnly: boolean;
  /** Attachments by `url` under `serviceUrl`, or with their bytes inline. */
  attachmentsByUrl: boolean;
  /** The service's URL (`…/FeatureServer`), for attachments' URLs. */
  serviceUrl: string;
}

/**
 * The net change of each feature over a range, as the product reports it: created then changed is an add with
 * its latest row, created then deleted is left out, changed then deleted a delete, anything else an update.
 */
function netChanges(entries: readonly ChangeEntry[]): Map<number, { op: 'add' | 'update' | 'delete'; last: ChangeEntry }> {
  const net = new Map<number, { op: 'add' | 'update' | 'delete'; last: ChangeEntry }>();
  for (const entry of entries) {
    const before = net.get(entry.objectId);
    const created = before?.op === 'add' || (before === undefined && entry.op === 'add');
    if (created && entry.op === 'delete') net.delete(entry.objectId);
    else net.set(entry.objectId, { op: created ? 'add' : entry.op, last: entry });
  }
  return net;
}

/** A row filter from the request's `layerQueries` and `geometry` for `layer`; undefined keeps every change. */
function filterOf(request: ExtractRequest, layer: FeatureLayer): ((row: Row) => boolean) | undefined {
  const query = request.layerQueries.get(layer.id);
  const where =
    query?.queryOption === 'useFilter' && query.where !== undefined ? compileWhere(query.where, layer.definition.fields) : undefined;
  let envelope: Envelope | undefined;
  if (request.geometry !== undefined && layer.definition.spatialReference !== undefined) {
    const own = normalizeWkid(layer.definition.spatialReference);
    const { xmin, ymin, xmax, ymax } = request.geometry.envelope;
    const corners = project(
      {
        paths: [
          [
            [xmin, ymin],
            [xmax, ymax],
          ],
        ],
      },
      request.geometry.wkid ?? own,
      own,
      'inSR',
    ) as { paths: number[][][] };
    const [[x1, y1], [x2, y2]] = corners.paths[0]! as [[number, number], [number, number]];
    envelope = { xmin: Math.min(x1, x2), ymin: Math.min(y1, y2), xmax: Math.max(x1, x2), ymax: Math.max(y1, y2) };
  }
  if (where === undefined && envelope === undefined) return undefined;
  return (row) =>
    (where === undefined || where(row.attributes)) &&
    (envelope === undefined || (row.geometry !== null && intersectsEnvelope(row.geometry, envelope)));
}

/** The generations to read for `layer`: `(from, to]`. */
function rangeFor(
  request: ExtractRequest,
  service: ServiceFeatures,
  layer: FeatureLayer,
  now: number,
  store: FeatureStore,
): [number, number] {
  const current = store.layerServerGen(service, layer, now).serverGen;
  if (request.range.kind === 'serverGens') return [request.range.from, request.range.to ?? current];
  return [request.range.from.get(layer.id) ?? current, current];
}

/**
 * Answers an `extractChanges` request on `service`: per layer asked for (without `layers`, per layer with changes
 * in the range), its net changes in the range, filtered by `layerQueries` and `geometry`, with deletes as object
 * ids (Enterprise) or GlobalIDs (`deletesAsGlobalIds`, ArcGIS Online). Throws the product's errors: an unknown
 * layer, a bad `where`, `layers` that disagree with `layerServerGens`.
 */
export function extractChanges(
  store: FeatureStore,
  service: ServiceFeatures,
  request: ExtractRequest,
  options: { now: number; deletesAsGlobalIds: boolean; serviceUrl: string },
): ChangesAnswer {
  if (request.syncModelMismatch) throw new AdminError(400, 'Unable to complete operation.', SYNC_MODEL_MISMATCH);
  const ranged = (request.layers ?? service.layers.map(({ id }) => id)).map((id) => {
    const layer = service.layer(id);
    if (layer === undefined) throw new AdminError(400, 'Unable to complete operation.', `Layer ${id} not found.`);
    const [from, to] = rangeFor(request, service, layer, options.now, store);
    return { layer, from, to, entries: layer.log.between(from, to) };
  });
  const chosen =
    request.layers === undefined
      ? ranged.filter(({ layer, from, to, entries }) => entries.length > 0 || layer.attachments.between(from, to).length > 0)
      : ranged;
  return {
    layerServerGens: chosen.map(({ layer, to }) => ({ id: layer.id, serverGen: to })),
    layers: chosen.map(({ layer, from, to, entries }) => {
      const changes = layerChanges(request, layer, entries, options.deletesAsGlobalIds);
      if (request.returnAttachments && layer.definition.hasAttachments === true) changes.attachments = attachmentChanges(layer, from, to);
      return changes;
    }),
    outSR: request.outSR,
    idsOnly: request.returnIdsOnly,
    extentOnly: request.returnExtentOnly,
    attachmentsByUrl: request.returnAttachmentsDataByUrl,
    serviceUrl: options.serviceUrl,
  };
}

/** A layer's net attachment changes in `(from, to]`. */
function attachmentChanges(layer: FeatureLayer, from: number, to: number): NonNullable<LayerChanges['attachments']> {
  const changes: NonNullable<LayerChanges['attachments']> = { adds: [], updates: [], deletes: [] };
  for (const { op, attachment } of layer.attachments.netChanges(from, to)) {
    if (op === 'delete') changes.deletes.push(attachment.globalId);
    else (op === 'add' ? changes.adds : changes.updates).push(attachment);
  }
  return changes;
}

function layerChanges(
  request: ExtractRequest,
  layer: FeatureLayer,
  entries: readonly ChangeEntry[],
  deletesAsGlobalIds: boolean,
): LayerChanges {
  const changes: LayerChanges = {
    id: layer.id,
    layer,
    adds: request.returnInserts ? [] : undefined,
    updates: request.returnUpdates ? [] : undefined,
    deletes: request.returnDeletes ? [] : undefined,
  };
  if (request.layerQueries.get(layer.id)?.queryOption === 'none') return changes;
  const keep = filterOf(request, layer);
  for (const [objectId, { op, last }] of netChanges(entries)) {
    if (keep !== undefined && !keep(last.row)) continue;
    if (op === 'delete') changes.deletes?.push(deletesAsGlobalIds ? last.globalId : objectId);
    else (op === 'add' ? changes.adds : changes.updates)?.push(last.row);
  }
  return changes;
}

/** A row's geometry in `outSR` (the layer's own when undefined). */
export function geometryIn(layer: FeatureLayer, geometry: Geometry | null, outSR: number | undefined): Geometry | null {
  const own = layer.definition.spatialReference;
  if (geometry === null || outSR === undefined || own === undefined) return geometry;
  return project(geometry, normalizeWkid(own), outSR, 'outSR');
}
