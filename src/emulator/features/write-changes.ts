import type { Attachment } from './attachments.js';
import type { Row } from './change-log.js';
import { stringifyExact } from './exact-json.js';
import { geometryIn, type ChangesAnswer, type LayerChanges } from './extract-changes.js';
import type { Envelope } from './types.js';

/** Rows written per chunk: large answers are streamed, never held whole as one string. */
const ROWS_PER_CHUNK = 500;

function* listChunks(name: string, rows: readonly Row[], write: (row: Row) => unknown): Generator<string> {
  yield `"${name}":[`;
  for (let start = 0; start < rows.length; start += ROWS_PER_CHUNK) {
    const text = stringifyExact(rows.slice(start, start + ROWS_PER_CHUNK).map(write));
    yield `${start === 0 ? '' : ','}${text.slice(1, -1)}`;
  }
  yield ']';
}

function* featureChunks(answer: ChangesAnswer, layer: LayerChanges): Generator<string> {
  const write = (row: Row): unknown => {
    const geometry = geometryIn(layer.layer, row.geometry, answer.outSR);
    return layer.layer.definition.type === 'Table' ? { attributes: row.attributes } : { attributes: row.attributes, geometry };
  };
  const lists: [string, Row[]][] = [];
  if (layer.adds !== undefined) lists.push(['adds', layer.adds]);
  if (layer.updates !== undefined) lists.push(['updates', layer.updates]);
  yield `{"id":${layer.id},"features":{`;
  for (const [index, [name, rows]] of lists.entries()) {
    if (index > 0) yield ',';
    yield* listChunks(name, rows, write);
  }
  if (layer.deletes !== undefined) yield `${lists.length > 0 ? ',' : ''}"deleteIds":${stringifyExact(layer.deletes)}`;
  yield '}';
  yield* attachmentChunks(answer, layer);
  yield '}';
}

/**
 * A layer's `,"attachments":{adds, updates, deleteIds}` when asked for: each attachment as sync writes it
 * (`attachmentId`, `globalId`, `parentGlobalId`, `name`, `contentType`, `size`, `keywords`) with its bytes by `url`
 * or inline as base64 `data` (neither with `returnIdsOnly`); deletes by GlobalID.
 */
function* attachmentChunks(answer: ChangesAnswer, layer: LayerChanges): Generator<string> {
  if (layer.attachments === undefined) return;
  const write = (attachment: Attachment): unknown => ({
    attachmentId: attachment.id,
    globalId: attachment.globalId,
    parentGlobalId: attachment.parentGlobalId,
    name: attachment.name,
    contentType: attachment.contentType,
    size: attachment.data.length,
    keywords: attachment.keywords,
    ...(answer.idsOnly
      ? {}
      : answer.attachmentsByUrl
        ? { url: `${answer.serviceUrl}/${layer.id}/${attachment.parentObjectId}/attachments/${attachment.id}` }
        : { data: attachment.data.toString('base64') }),
  });
  const { adds, updates, deletes } = layer.attachments;
  yield `,"attachments":{"adds":${JSON.stringify(adds.map(write))},"updates":${JSON.stringify(updates.map(write))},"deleteIds":${JSON.stringify(deletes)}}`;
}

/** With `returnIdsOnly`: a layer's `objectIds: {adds, updates, deletes}`. */
function idsOf(layer: LayerChanges): unknown {
  const objectId = (row: Row): unknown => row.attributes[layer.layer.definition.objectIdField];
  const ids: Record<string, unknown[]> = {};
  if (layer.adds !== undefined) ids.adds = layer.adds.map(objectId);
  if (layer.updates !== undefined) ids.updates = layer.updates.map(objectId);
  if (layer.deletes !== undefined) ids.deletes = layer.deletes;
  return { id: layer.id, objectIds: ids };
}

function* idsChunks(answer: ChangesAnswer, layer: LayerChanges): Generator<string> {
  yield stringifyExact(idsOf(layer)).slice(0, -1);
  yield* attachmentChunks(answer, layer);
  yield '}';
}

/** With `returnExtentOnly`: the envelope of every changed row still there, in `outSR`. */
function extentOf(answer: ChangesAnswer): Envelope | null {
  let extent: Envelope | null = null;
  for (const layer of answer.layers) {
    for (const row of [...(layer.adds ?? []), ...(layer.updates ?? [])]) {
      const geometry = geometryIn(layer.layer, row.geometry, answer.outSR);
      if (geometry === null) continue;
      const points = 'x' in geometry ? [[geometry.x, geometry.y]] : ('paths' in geometry ? geometry.paths : geometry.rings).flat();
      for (const [x, y] of points as [number, number][]) {
        extent =
          extent === null
            ? { xmin: x, ymin: y, xmax: x, ymax: y }
            : {
                xmin: Math.min(extent.xmin, x),
                ymin: Math.min(extent.ymin, y),
                xmax: Math.max(extent.xmax, x),
                ymax: Math.max(extent.ymax, y),
              };
      }
    }
  }
  return extent;
}

/**
 * An `extractChanges` answer as JSON text, in chunks: `{layerServerGens, transportType, responseType, edits}`, each
 * layer's `features` (`adds`, `updates` as rows, `deleteIds`) or, with `returnIdsOnly`, its `objectIds`; with
 * `returnExtentOnly`, `extent` in place of `edits`.
 */
export function* writeChanges(answer: ChangesAnswer): Generator<string> {
  yield `{"layerServerGens":${JSON.stringify(answer.layerServerGens)},"transportType":"esriTransportTypeEmbedded","responseType":"esriDataChangesResponseTypeEdits",`;
  if (answer.extentOnly) {
    yield `"extent":${JSON.stringify(extentOf(answer))}}`;
    return;
  }
  yield '"edits":[';
  for (const [index, layer] of answer.layers.entries()) {
    if (index > 0) yield ',';
    if (answer.idsOnly) yield* idsChunks(answer, layer);
    else yield* featureChunks(answer, layer);
  }
  yield ']}';
}
