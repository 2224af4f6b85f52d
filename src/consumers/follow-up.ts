import { isResolvedAuth, type AdminAuth, type ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { namedUrls } from '../arcgis/named-urls.js';
import { trustedUrls, type TrustedUrls } from '../arcgis/trusted-urls.js';
import { unexpected } from '../arcgis-request/check-response.js';
import { httpUrl, readChanges, type FeatureChanges } from '../arcgis-request/extract-changes.js';
import { createServiceSession, type ServiceSession } from '../arcgis-request/service-session.js';
import type { GeohookEvent } from '../events/envelope.js';
import { isUnverifiedDelivery } from '../events/stored-event.js';
import { changesUrlsOf, followUpError, statusUrlOf } from './follow-up-urls.js';

export type { EsriFeature, FeatureChanges, LayerChanges } from '../arcgis-request/extract-changes.js';

type JsonObject = Record<string, unknown>;

/** Options of `fetchChanges` and `fetchJobResult` (docs/consumers.md#follow-up-fetches). */
export interface FollowUpOptions {
  /**
   * Where the calls may go: origins (`https://gis.example.com`) or URL prefixes (`https://services.arcgis.com/<orgId>/ArcGIS/`).
   * A URL the event names outside them is refused, unsent (`GEOHOOK_ERR_UNTRUSTED_URL`): the event says where
   * the edits are, these say where the token may go.
   */
  allowedOrigins: readonly string[];
  /**
   * Signed storage an answer may name, or redirect a result to, besides the GIS server's own origin: http(s)
   * origins, `*.` before a host for any of its subdomains. A URL an answer names anywhere else is refused, unsent.
   * @defaultValue ['https://*.arcgis.com'] (ArcGIS Online's storage)
   */
  allowedStorage?: readonly string[];
  /**
   * A token, or credentials with the `tokenUrl` they are exchanged at (the portal's
   * `…/sharing/rest/generateToken`; never derived from the event). Tokens are renewed before expiry and once
   * when the server answers 498/499; pass the same object to every call to share its token.
   * @defaultValue no token is sent
   */
  auth?: AdminAuth;
  /**
   * Follow up a delivery whose signature was not verified (`verified: false`, with REQUIRE_SIGNATURE=false).
   * Backfilled and polled events are geohook's own, read from trusted servers, and always followed up.
   * @defaultValue false
   */
  allowUnverified?: boolean;
  /** Each request, body included. @defaultValue 10000 */
  timeoutMs?: number;
  /** The whole call: every request and every wait between polls. @defaultValue 60000 */
  deadlineMs?: number;
  /** Wait between two polls of a job still running. @defaultValue 1000 */
  pollIntervalMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

function allowedOf(options: FollowUpOptions): TrustedUrls {
  if (!Array.isArray(options.allowedOrigins) || options.allowedOrigins.length === 0) {
    throw followUpError('allowedOrigins: required, the origins (or URL prefixes) of the GIS servers the event may be followed up at');
  }
  try {
    return trustedUrls(options.allowedOrigins);
  } catch (err) {
    throw followUpError(`allowedOrigins: ${(err as Error).message}`);
  }
}

/** The session of one follow-up call, once the event and the options pass the checks that keep credentials home. */
function sessionFor(event: GeohookEvent, options: FollowUpOptions): ServiceSession {
  const trusted = allowedOf(options);
  if (isUnverifiedDelivery(event) && options.allowUnverified !== true) {
    throw followUpError(`event ${event.id} was not verified by a signature: pass allowUnverified to follow it up`);
  }
  const { auth } = options;
  if (auth !== undefined && !isResolvedAuth(auth)) {
    throw followUpError('auth: credentials need tokenUrl, where tokens come from (it is never taken from the event)');
  }
  const storage = options.allowedStorage;
  if (storage !== undefined) {
    try {
      namedUrls(storage);
    } catch (err) {
      throw followUpError(`allowedStorage: ${(err as Error).message}`);
    }
  }
  return createServiceSession({
    trusted,
    ...(storage === undefined ? {} : { storage }),
    ...(auth === undefined ? {} : { auth: auth as ResolvedAdminAuth }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.deadlineMs === undefined ? {} : { deadlineMs: options.deadlineMs }),
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
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

/**
 * Fetches the edits a feature event reports: calls each `changesUrl` of the payload (Enterprise: one object;
 * ArcGIS Online: an array whose URLs are percent-encoded) with a token, following the asynchronous pattern
 * (`statusUrl` polled until `Completed`, then `resultUrl`). One {@link FeatureChanges} per payload item, in order.
 * Only URLs under `allowedOrigins` are called (a result they name, without the token), and only for a
 * verified event unless `allowUnverified`.
 *
 * @throws GeohookError `GEOHOOK_ERR_FOLLOW_UP` when the event has no usable http(s) `changesUrl`, is not verified,
 * the options lack `allowedOrigins` (or credentials their `tokenUrl`), the job fails or `deadlineMs` passes;
 * `GEOHOOK_ERR_UNTRUSTED_URL` for a URL outside `allowedOrigins`; `AdminAuthError` when the token is refused
 * (after one renewal of credentials); `AdminApiError` for any other error answer, a redirect, a timeout or
 * network failure, or an answer without `edits`.
 */
export async function fetchChanges(event: GeohookEvent, options: FollowUpOptions): Promise<FeatureChanges[]> {
  const session = sessionFor(event, options);
  const urls = changesUrlsOf(event);
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
  session: ServiceSession,
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
export async function fetchJobResult(event: GeohookEvent, options: FollowUpOptions): Promise<JobResult> {
  const session = sessionFor(event, options);
  const jobUrl = statusUrlOf(event);
  const status = await session.poll(jobUrl, undefined, (answer) => !runningStatuses.has(String(answer.jobStatus).toLowerCase()));
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
