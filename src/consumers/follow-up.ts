import { unexpected } from '../arcgis-request/check-response.js';
import type { GeohookEvent } from '../queue/envelope.js';
import { createFollowUpSession, type FollowUpOptions, type FollowUpSession } from './follow-up-request.js';
import { changesUrlsOf, followUpError, httpUrl, statusUrlOf } from './follow-up-urls.js';

export type { FollowUpOptions } from './follow-up-request.js';

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
}

/** What `extractChanges` answered for one `changesUrl` of a feature event. */
export interface FeatureChanges {
  /** The URL called, decoded (ArcGIS Online sends it percent-encoded). */
  changesUrl: string;
  /** Each layer's server generation at extraction time: the next `serverGens[0]`. */
  layerServerGens: { id: number; serverGen: number }[];
  edits: LayerChanges[];
}

/** One parameter value of a GP job (`…/jobs/<jobId>/results/<name>`). */
export interface GpParameterValue {
  paramName: string;
  /** `GPFeatureRecordSetLayer`, `GPString`, `GPLong`… */
  dataType: string;
  value: unknown;
}

/** A GP job's status, messages and result values. */
export interface JobResult {
  /** The job resource read (the payload's `statusURL`). */
  statusUrl: string;
  jobId: string;
  /** `esriJobSucceeded`, `esriJobFailed`, `esriJobCancelled`, `esriJobTimedOut`… */
  jobStatus: string;
  messages: { type: string; description: string }[];
  /** Each result the job lists, by parameter name (none unless it succeeded). */
  results: Record<string, GpParameterValue>;
}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function layerChangesOf(value: unknown, url: URL, body: JsonObject): LayerChanges {
  if (!isObject(value) || typeof value.id !== 'number') throw unexpected(url.href, "layer 'id' in 'edits'", body);
  const features = isObject(value.features) ? value.features : {};
  const featureList = (name: string): EsriFeature[] =>
    listOf(features[name]).map((feature) => {
      if (!isObject(feature) || !isObject(feature.attributes)) throw unexpected(url.href, `feature 'attributes' in '${name}'`, body);
      return feature as unknown as EsriFeature;
    });
  const deleteIds = listOf(features.deleteIds).filter((id): id is number | string => typeof id === 'number' || typeof id === 'string');
  return { id: value.id, features: { adds: featureList('adds'), updates: featureList('updates'), deleteIds } };
}

/** Reads `url` (extractChanges); an asynchronous answer (`statusUrl`) is polled until `Completed`, then its `resultUrl` read. */
export async function readChanges(session: FollowUpSession, url: URL): Promise<FeatureChanges> {
  let body = await session.read(url, url);
  if (body.statusUrl !== undefined) {
    const statusUrl = httpUrl(body.statusUrl, 'the extractChanges statusUrl');
    const done = await session.poll(statusUrl, url, (status) => {
      const state = String(status.status).toLowerCase();
      if (state === 'failed' || state === 'completedwitherrors')
        throw followUpError(`extractChanges job ${statusUrl.pathname} ended ${String(status.status)}`);
      return state === 'completed';
    });
    body = await session.read(httpUrl(done.resultUrl, 'the extractChanges resultUrl'), url);
  }
  if (!Array.isArray(body.edits)) throw unexpected(url.href, "'edits' array", body);
  const layerServerGens = listOf(body.layerServerGens).filter(
    (gen): gen is { id: number; serverGen: number } => isObject(gen) && typeof gen.id === 'number' && typeof gen.serverGen === 'number',
  );
  return { changesUrl: url.href, layerServerGens, edits: body.edits.map((edit) => layerChangesOf(edit, url, body)) };
}

/**
 * Fetches the edits a feature event reports: calls each `changesUrl` of the payload (Enterprise: one object;
 * ArcGIS Online: an array whose URLs are percent-encoded) with a token, following the asynchronous pattern
 * (`statusUrl` polled until `Completed`, then `resultUrl`). One {@link FeatureChanges} per payload item, in order.
 *
 * @throws GeohookError `GEOHOOK_ERR_FOLLOW_UP` when the event has no usable http(s) `changesUrl`, the job fails
 * or `deadlineMs` passes; `AdminAuthError` when the token is refused (after one renewal of credentials);
 * `AdminApiError` for any other error answer, a timeout or network failure, or an answer without `edits`.
 */
export async function fetchChanges(event: GeohookEvent, options: FollowUpOptions = {}): Promise<FeatureChanges[]> {
  const urls = changesUrlsOf(event);
  const session = createFollowUpSession(options);
  const changes: FeatureChanges[] = [];
  for (const url of urls) changes.push(await readChanges(session, url));
  return changes;
}

/** GP statuses of a job still on its way; any other is final. */
const runningStatuses = new Set([
  'esrijobnew',
  'esrijobsubmitted',
  'esrijobwaiting',
  'esrijobexecuting',
  'esrijobcancelling',
  'esrijobdeleting',
]);

async function parameterOf(
  session: FollowUpSession,
  jobUrl: URL,
  name: string,
  ref: unknown,
  status: JsonObject,
): Promise<GpParameterValue> {
  if (!isObject(ref) || typeof ref.paramUrl !== 'string') throw unexpected(jobUrl.href, `'paramUrl' of result '${name}'`, status);
  const base = new URL(jobUrl.href);
  base.search = '';
  base.pathname = `${base.pathname.replace(/\/+$/, '')}/`;
  const url = httpUrl(new URL(ref.paramUrl, base).href, `the paramUrl of result '${name}'`);
  const body = await session.read(url, jobUrl);
  if (typeof body.dataType !== 'string' || !('value' in body))
    throw unexpected(url.href, `'dataType' and 'value' of result '${name}'`, body);
  return { paramName: typeof body.paramName === 'string' ? body.paramName : name, dataType: body.dataType, value: body.value };
}

/**
 * Fetches what a GP event's job produced: its status from the payload's `statusURL` (polled while the job is
 * still running), its messages, and the value of each result it lists (`results/<param>`).
 *
 * @throws as {@link fetchChanges}; `GEOHOOK_ERR_FOLLOW_UP` when the event has no usable `statusURL`.
 */
export async function fetchJobResult(event: GeohookEvent, options: FollowUpOptions = {}): Promise<JobResult> {
  const jobUrl = statusUrlOf(event);
  const session = createFollowUpSession(options);
  const status = await session.poll(jobUrl, jobUrl, (answer) => !runningStatuses.has(String(answer.jobStatus).toLowerCase()));
  if (typeof status.jobStatus !== 'string') throw unexpected(jobUrl.href, "'jobStatus'", status);
  const results: Record<string, GpParameterValue> = {};
  for (const [name, ref] of Object.entries(isObject(status.results) ? status.results : {})) {
    results[name] = await parameterOf(session, jobUrl, name, ref, status);
  }
  const messages = listOf(status.messages).filter(
    (message): message is { type: string; description: string } =>
      isObject(message) && typeof message.type === 'string' && typeof message.description === 'string',
  );
  const jobId = typeof status.jobId === 'string' ? status.jobId : (jobUrl.pathname.split('/').at(-1) ?? '');
  return { statusUrl: jobUrl.href, jobId, jobStatus: status.jobStatus, messages, results };
}
