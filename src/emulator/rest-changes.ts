import { createHash } from 'node:crypto';
import { invalidParameter } from './admin-error.js';
import type { Params } from './params.js';
import type { FiredHistory } from './rest-history.js';
import type { ChangesQuery, FeatureChange, FiredEdit } from './types.js';

/** A feature as `extractChanges` returns it. */
export interface PointFeature {
  attributes: Record<string, unknown>;
  geometry: { x: number; y: number; spatialReference: { wkid: number } };
}

const isGeneration = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** `layers`: a JSON array (`[0,1]`) or a comma list (`0,1`) of layer ids. */
function layersOf(params: Params): number[] | undefined {
  const text = params.string('layers')?.trim();
  if (text === undefined || text === '') return undefined;
  const list = text.startsWith('[') ? params.json('layers') : text.split(',').map((item) => Number(item.trim()));
  if (!Array.isArray(list) || !list.every(isGeneration)) throw invalidParameter('layers', 'must be an array of layer ids such as [0,1]');
  return list;
}

/**
 * The `extractChanges` parameters the emulator honours; `returnInserts`, `returnUpdates`, `returnDeletes` default to
 * true, `returnIdsOnly` and `async` to false.
 */
export function readChangesQuery(params: Params): ChangesQuery & { async: boolean } {
  params.requiredString('serverGens');
  const serverGens = params.json('serverGens');
  const [from, to] = Array.isArray(serverGens) && serverGens.length === 2 ? serverGens : [];
  if (!isGeneration(from) || !isGeneration(to) || from > to) {
    throw invalidParameter('serverGens', 'must be [minServerGen,serverGen], two server generations in order');
  }
  return {
    serverGens: [from, to],
    layers: layersOf(params),
    returnInserts: params.boolean('returnInserts') ?? true,
    returnUpdates: params.boolean('returnUpdates') ?? true,
    returnDeletes: params.boolean('returnDeletes') ?? true,
    returnIdsOnly: params.boolean('returnIdsOnly') ?? false,
    async: params.boolean('async') ?? false,
  };
}

/** `{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}`, the same for the same feature every time. */
function globalIdOf(service: string, layerId: number, objectId: number): string {
  const hex = createHash('sha1').update(`${service}#${layerId}#${objectId}`).digest('hex').toUpperCase();
  return `{${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}}`;
}

function featureOf(edit: FiredEdit, objectId: number): PointFeature {
  return {
    attributes: {
      objectid: objectId,
      globalid: globalIdOf(edit.service, edit.layerId, objectId),
      name: `Feature ${objectId}`,
      last_edited_date: edit.when,
    },
    geometry: {
      x: Number((-117.1956 + objectId * 0.001).toFixed(6)),
      y: Number((34.0564 + edit.layerId * 0.01).toFixed(6)),
      spatialReference: { wkid: 4326 },
    },
  };
}

/**
 * The net change of each feature over the edits, as the product reports it: a feature created then updated is
 * an add (as it now is), one created then deleted is left out, anything else ends as its last change.
 */
function netChanges(edits: readonly FiredEdit[]): Map<number, { change: FeatureChange; edit: FiredEdit }> {
  const net = new Map<number, { change: FeatureChange; edit: FiredEdit }>();
  for (const edit of edits) {
    if (edit.feature === undefined) continue;
    const { change, objectId } = edit.feature;
    const before = net.get(objectId)?.change;
    net.delete(objectId);
    if (before === 'adds' && change === 'deleteIds') continue;
    net.set(objectId, { change: before === 'adds' ? 'adds' : change, edit });
  }
  return net;
}

/** A layer's changes as ids only (`returnIdsOnly=true`): `{adds, updates, deletes}`, each list asked for. */
function layerIds(edits: readonly FiredEdit[], query: ChangesQuery): Record<string, number[]> {
  const ids: { adds?: number[]; updates?: number[]; deletes?: number[] } = {};
  if (query.returnInserts) ids.adds = [];
  if (query.returnUpdates) ids.updates = [];
  if (query.returnDeletes) ids.deletes = [];
  for (const [objectId, { change }] of netChanges(edits)) ids[change === 'deleteIds' ? 'deletes' : change]?.push(objectId);
  return ids;
}

function layerEdits(edits: readonly FiredEdit[], query: ChangesQuery): Record<string, unknown> {
  const features: { adds?: PointFeature[]; updates?: PointFeature[]; deleteIds?: number[] } = {};
  if (query.returnInserts) features.adds = [];
  if (query.returnUpdates) features.updates = [];
  if (query.returnDeletes) features.deleteIds = [];
  for (const [objectId, { change, edit }] of netChanges(edits)) {
    if (change === 'deleteIds') features.deleteIds?.push(objectId);
    else features[change]?.push(featureOf(edit, objectId));
  }
  return features;
}

/**
 * The answer of `extractChanges` for `service`: the edits fired with a server generation in
 * `(serverGens[0], serverGens[1]]`, one entry per layer asked for (without `layers`: per layer with edits in
 * the range), and each layer's newest server generation; with `returnIdsOnly`, each layer's object ids
 * (`objectIds: {adds, updates, deletes}`) in place of its features. A range holding no edit gives empty lists.
 */
export function extractChanges(history: FiredHistory, service: string, query: ChangesQuery): Record<string, unknown> {
  const [from, to] = query.serverGens;
  const inRange = history.editsBetween(service, from, to);
  const layers = query.layers ?? [...new Set(inRange.map((edit) => edit.layerId))].sort((a, b) => a - b);
  return {
    layerServerGens: layers.map((id) => ({ id, serverGen: history.latestGen(service, id) ?? to })),
    transportType: 'esriTransportTypeEmbedded',
    responseType: 'esriDataChangesResponseTypeEdits',
    edits: layers.map((id) => {
      const edits = inRange.filter((edit) => edit.layerId === id);
      return query.returnIdsOnly ? { id, objectIds: layerIds(edits, query) } : { id, features: layerEdits(edits, query) };
    }),
  };
}
