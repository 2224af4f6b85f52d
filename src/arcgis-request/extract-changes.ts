import { decodePayloadUrl } from '../arcgis/changes-url.js';
import { GeohookError } from '../errors.js';
import { changeFileOf, spoolChangeFile, type ChangeFile, type SpoolOptions } from './change-file.js';
import { unexpected, type JsonParser } from './check-response.js';
import { parseExactJson } from './parse-exact-json.js';
import type { ServiceSession } from './service-session.js';

type JsonObject = Record<string, unknown>;

/** A feature as `extractChanges` returns it. */
export interface EsriFeature {
  attributes: JsonObject;
  geometry?: JsonObject;
}

/** The changes of one layer (missing lists, e.g. with `returnDeletes=false`, are empty). */
export interface LayerChanges {
  /** Layer id. */
  id: number;
  features: { adds: EsriFeature[]; updates: EsriFeature[]; deleteIds: (number | string)[] };
  /** The ids of the changed features, when the server answered ids only (`returnIdsOnly=true`); `features` is then empty. */
  objectIds?: { adds: (number | string)[]; updates: (number | string)[]; deletes: (number | string)[] };
}

/** What `extractChanges` answered for one `changesUrl` of a feature event. */
export interface FeatureChanges {
  /** The URL called, decoded (ArcGIS Online sends it percent-encoded). */
  changesUrl: string;
  /** Each layer's server generation at extraction time: the next `serverGens[0]`. */
  layerServerGens: { id: number; serverGen: number }[];
  edits: LayerChanges[];
}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** `value` as an http(s) URL, decoded once when it is percent-encoded as a whole; `what` names it in errors (the value is not echoed). */
export function httpUrl(value: unknown, what: string): URL {
  const url = typeof value === 'string' && value.trim() !== '' ? decodePayloadUrl(value) : undefined;
  if (url === undefined) throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `${what} is missing or not a valid http or https URL`);
  return url;
}

/** The ids of a list: numbers (object ids) or strings (global ids); anything else is left out. */
const idList = (value: unknown): (number | string)[] =>
  listOf(value).filter((id): id is number | string => typeof id === 'number' || typeof id === 'string');

function layerChangesOf(value: unknown, url: URL, body: JsonObject): LayerChanges {
  if (!isObject(value) || typeof value.id !== 'number') throw unexpected(url.href, "layer 'id' in 'edits'", body);
  const features = isObject(value.features) ? value.features : {};
  const featureList = (name: string): EsriFeature[] =>
    listOf(features[name]).map((feature) => {
      if (!isObject(feature) || !isObject(feature.attributes)) throw unexpected(url.href, `feature 'attributes' in '${name}'`, body);
      return feature as unknown as EsriFeature;
    });
  const changes: LayerChanges = {
    id: value.id,
    features: { adds: featureList('adds'), updates: featureList('updates'), deleteIds: idList(features.deleteIds) },
  };
  if (!isObject(value.objectIds)) return changes;
  const { adds, updates, deletes } = value.objectIds;
  return { ...changes, objectIds: { adds: idList(adds), updates: idList(updates), deletes: idList(deletes) } };
}

/** The `resultUrl` of an asynchronous `extractChanges` answer, once its job completed; undefined for an answer given at once. */
async function resultUrlOf(session: ServiceSession, url: URL, body: Record<string, unknown>): Promise<URL | undefined> {
  if (body.statusUrl === undefined) return undefined;
  const statusUrl = httpUrl(body.statusUrl, 'the extractChanges statusUrl');
  const done = await session.poll(statusUrl, url, (status) => {
    const state = String(status.status).toLowerCase();
    if (state === 'failed' || state === 'completedwitherrors')
      throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `extractChanges job ${statusUrl.pathname} ended ${String(status.status)}`);
    return state === 'completed';
  });
  return httpUrl(done.resultUrl, 'the extractChanges resultUrl');
}

/**
 * Reads `url` (`extractChanges`) in `session`: an asynchronous answer (`statusUrl`) is polled until `Completed`,
 * then its `resultUrl` downloaded (a redirect to signed storage is followed without the token). `parse` reads the
 * answers' JSON (`JSON.parse` by default).
 */
export async function readChanges(session: ServiceSession, url: URL, parse?: JsonParser): Promise<FeatureChanges> {
  let body = await session.read(url, undefined, parse);
  const resultUrl = await resultUrlOf(session, url, body);
  if (resultUrl !== undefined) body = await session.download(resultUrl, url, parse);
  if (!Array.isArray(body.edits)) throw unexpected(url.href, "'edits' array", body);
  const layerServerGens = listOf(body.layerServerGens).filter(
    (gen): gen is { id: number; serverGen: number } => isObject(gen) && typeof gen.id === 'number' && typeof gen.serverGen === 'number',
  );
  return { changesUrl: url.href, layerServerGens, edits: body.edits.map((edit) => layerChangesOf(edit, url, body)) };
}

/**
 * {@link readChanges} for changes too many to hold: the result file is downloaded to disk as it arrives and read
 * back a batch at a time ({@link ChangeFile}, BigInteger values beyond 2^53 as decimal strings); an answer given at
 * once is read from memory. The caller closes the file.
 */
export async function openChanges(session: ServiceSession, url: URL, options: SpoolOptions = {}): Promise<ChangeFile> {
  const body = await session.read(url, undefined, parseExactJson);
  const resultUrl = await resultUrlOf(session, url, body);
  const file =
    resultUrl === undefined ? changeFileOf(body) : await session.downloadTo(resultUrl, url, (stream) => spoolChangeFile(stream, options));
  if (!file.hasEdits) {
    await file.close();
    throw unexpected(url.href, "'edits' array", { ...file.root });
  }
  return file;
}
