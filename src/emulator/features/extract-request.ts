import { AdminError, invalidParameter } from '../admin-error.js';
import type { Params } from '../params.js';
import type { ExtractChangesCapabilities } from './extract-profiles.js';
import { normalizeWkid, parseEnvelope } from './geometry.js';
import type { Envelope } from './types.js';

/** The generations an `extractChanges` call reads: one range for every layer, or each layer's own start. */
export type ExtractRange =
  { kind: 'serverGens'; from: number; to: number | undefined } | { kind: 'layerServerGens'; from: ReadonlyMap<number, number> };

/** A layer's `layerQueries` entry: `useFilter` applies `where`, `all` takes every change, `none` none. */
export interface LayerQuery {
  queryOption: 'useFilter' | 'all' | 'none';
  where?: string;
}

/** An `extractChanges` request, read and checked against what the server supports. */
export interface ExtractRequest {
  range: ExtractRange;
  /** Layer ids asked for; undefined: every layer with changes in the range. */
  layers: number[] | undefined;
  returnInserts: boolean;
  returnUpdates: boolean;
  returnDeletes: boolean;
  returnIdsOnly: boolean;
  returnExtentOnly: boolean;
  /** Each layer's attachment changes too, under `attachments`. */
  returnAttachments: boolean;
  /** Attachments by `url` (true) or with their bytes inline as base64 `data`. */
  returnAttachmentsDataByUrl: boolean;
  layerQueries: ReadonlyMap<number, LayerQuery>;
  /** Only changes whose geometry intersects this envelope, in `inSR` (the layer's when undefined). */
  geometry?: { envelope: Envelope; wkid?: number };
  outSR?: number;
  async: boolean;
  /** `layers` and `layerServerGens` name different layers: the job fails as the product's does. */
  syncModelMismatch: boolean;
}

/** The message the product fails a job with when `layers` and `layerServerGens` disagree. */
export const SYNC_MODEL_MISMATCH = 'Invalid Sync model type. syncLayers json object is required.';

const isGeneration = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function layersOf(params: Params): number[] | undefined {
  const text = params.string('layers')?.trim();
  if (text === undefined || text === '') return undefined;
  const list = text.startsWith('[') ? params.json('layers') : text.split(',').map((item) => Number(item.trim()));
  if (!Array.isArray(list) || !list.every(isGeneration)) throw invalidParameter('layers', 'must be an array of layer ids such as [0,1]');
  return list;
}

function rangeOf(params: Params, capabilities: ExtractChangesCapabilities): ExtractRange {
  const hasGens = params.has('serverGens');
  if (hasGens && params.has('layerServerGens')) throw new AdminError(400, "Give one of 'serverGens' and 'layerServerGens', not both.");
  if (!hasGens && !params.has('layerServerGens'))
    throw new AdminError(400, "Missing required parameter 'serverGens' (or 'layerServerGens').");
  if (hasGens) {
    if (!capabilities.supportsServerGens)
      throw new AdminError(400, 'Unable to complete operation.', "'serverGens' is not supported by this service: use 'layerServerGens'.");
    const value = params.json('serverGens');
    const [from, to] = Array.isArray(value) ? value : [value];
    const pair = Array.isArray(value) && value.length === 2;
    if (!isGeneration(from) || (pair && (!isGeneration(to) || from > to)) || (Array.isArray(value) && !pair)) {
      throw invalidParameter('serverGens', 'must be [minServerGen,serverGen], two server generations in order');
    }
    return { kind: 'serverGens', from, to: pair ? (to as number) : undefined };
  }
  const list = params.json('layerServerGens');
  const valid =
    Array.isArray(list) &&
    list.every((item) => isGeneration((item as { id?: unknown })?.id) && isGeneration((item as { serverGen?: unknown }).serverGen));
  if (!valid) throw invalidParameter('layerServerGens', 'must be an array such as [{"id":0,"serverGen":1000}]');
  return {
    kind: 'layerServerGens',
    from: new Map((list as { id: number; serverGen: number }[]).map(({ id, serverGen }) => [id, serverGen])),
  };
}

function layerQueriesOf(params: Params, capabilities: ExtractChangesCapabilities): Map<number, LayerQuery> {
  const queries = new Map<number, LayerQuery>();
  if (!params.has('layerQueries')) return queries;
  if (!capabilities.supportsLayerQueries)
    throw new AdminError(400, 'Unable to complete operation.', "'layerQueries' is not supported by this service.");
  const value = params.json('layerQueries');
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw invalidParameter('layerQueries', 'must be an object such as {"0":{"where":"status = \'Open\'"}}');
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    const { where, queryOption = 'useFilter' } = (entry ?? {}) as { where?: unknown; queryOption?: unknown };
    if (
      !/^\d+$/.test(key) ||
      (where !== undefined && typeof where !== 'string') ||
      !['useFilter', 'all', 'none'].includes(String(queryOption))
    ) {
      throw invalidParameter('layerQueries', `entry '${key}' must be {"where":"…","queryOption":"useFilter"|"all"|"none"}`);
    }
    queries.set(Number(key), { queryOption: queryOption as LayerQuery['queryOption'], ...(typeof where === 'string' ? { where } : {}) });
  }
  return queries;
}

/** Reads an `extractChanges` request, refusing what the server's `capabilities` do not support. */
export function readExtractRequest(params: Params, capabilities: ExtractChangesCapabilities): ExtractRequest {
  const dataFormat = params.string('dataFormat')?.trim().toLowerCase();
  if (dataFormat !== undefined && dataFormat !== '' && dataFormat !== 'json') {
    throw new AdminError(400, 'Unable to complete operation.', "dataFormat 'sqlite' is not supported by the emulator: use json.");
  }
  const range = rangeOf(params, capabilities);
  const layers = layersOf(params);
  const returnIdsOnly = params.boolean('returnIdsOnly') ?? false;
  const returnExtentOnly = params.boolean('returnExtentOnly') ?? false;
  if (!returnIdsOnly && !capabilities.supportsFeatureReturn) {
    throw new AdminError(400, 'Unable to complete operation.', 'This service returns object ids only: set returnIdsOnly=true.');
  }
  if (returnExtentOnly && !capabilities.supportsReturnExtentOnly) {
    throw new AdminError(400, 'Unable to complete operation.', "'returnExtentOnly' is not supported by this service.");
  }
  const returnAttachments = params.boolean('returnAttachments') ?? false;
  if (returnAttachments && !capabilities.supportsReturnAttachments) {
    throw new AdminError(400, 'Unable to complete operation.', "'returnAttachments' is not supported by this service.");
  }
  let geometry: ExtractRequest['geometry'];
  if (params.has('geometry')) {
    if (!capabilities.supportsGeometry)
      throw new AdminError(400, 'Unable to complete operation.', "'geometry' is not supported by this service.");
    params.oneOf('geometryType', ['esriGeometryEnvelope']);
    const parsed = parseEnvelope(params.string('geometry'), 'geometry');
    const wkid = params.has('inSR') ? normalizeWkid(params.string('inSR')) : parsed.wkid;
    geometry = { envelope: parsed.envelope, ...(wkid === undefined ? {} : { wkid }) };
  }
  const syncModelMismatch =
    range.kind === 'layerServerGens' &&
    layers !== undefined &&
    (layers.length !== range.from.size || layers.some((id) => !range.from.has(id)));
  return {
    range,
    layers: layers ?? (range.kind === 'layerServerGens' ? [...range.from.keys()] : undefined),
    returnInserts: params.boolean('returnInserts') ?? true,
    returnUpdates: params.boolean('returnUpdates') ?? true,
    returnDeletes: params.boolean('returnDeletes') ?? true,
    returnIdsOnly,
    returnExtentOnly,
    returnAttachments,
    returnAttachmentsDataByUrl: params.boolean('returnAttachmentsDataByUrl') ?? true,
    layerQueries: layerQueriesOf(params, capabilities),
    ...(geometry === undefined ? {} : { geometry }),
    ...(params.has('outSR') ? { outSR: normalizeWkid(params.string('outSR')) } : {}),
    async: params.boolean('async') ?? false,
    syncModelMismatch,
  };
}
