import type { Webhook } from '../../arcgis/webhook.js';
import { sign } from '../../signature/sign.js';
import type { EmulatorEvent } from '../types.js';

/** Options of {@link buildPayload}. */
export interface BuildPayloadOptions {
  /** Root of the REST services directory that `statusURL` and `changesUrl` point into, e.g. `http://127.0.0.1:7080/arcgis/rest/services`. */
  restBaseUrl: string;
  /** Time of the event (epoch ms), written as `events[0].when`. */
  when: number;
}

/** The bytes of one delivery and the headers that describe them. */
export interface BuiltPayload {
  body: Buffer;
  contentType: Webhook['contentType'];
  /** `sha256=<base64>`, sent in `signatureHeader`; absent when the webhook has no key (or signs in a form field). */
  signature?: string;
  /** The header the signature travels in: `x-service` (Enterprise, as the spec names it) or `x-esriHook-Signature` (ArcGIS Online). */
  signatureHeader: string;
  /** The `eventType` the payload reports (`esriJobSucceeded`, `FeaturesCreated`…; several joined by commas). */
  eventType: string;
}

const gpEventTypes = {
  succeeded: 'esriJobSucceeded',
  failed: 'esriJobFailed',
  canceled: 'esriJobCancelled',
} as const;

/** `<folder>/<name>` (or `<name>` in the root folder), each segment URL-encoded. */
function servicePath(webhook: Webhook): string {
  const segments = webhook.folderName === '' ? [webhook.serviceName] : [webhook.folderName, webhook.serviceName];
  return segments.map(encodeURIComponent).join('/');
}

/** The payload object, in the field order of the real product (docs/events.md). */
function payloadObject(webhook: Webhook, event: EmulatorEvent, options: BuildPayloadOptions): Record<string, unknown> {
  const root = options.restBaseUrl.replace(/\/+$/, '');
  if (event.kind === 'gp') {
    const task = encodeURIComponent(event.taskName);
    return {
      serviceType: 'GPServer',
      jobId: event.jobId,
      statusURL: `${root}/${servicePath(webhook)}/GPServer/${task}/jobs/${encodeURIComponent(event.jobId)}`,
      name: webhook.name,
      taskName: event.taskName,
      folderName: webhook.folderName,
      serviceName: webhook.serviceName,
      events: [{ eventType: gpEventTypes[event.outcome], when: options.when }],
    };
  }
  const [from, to] = event.serverGens;
  return {
    serviceType: 'FeatureServer',
    changesUrl: `${root}/${servicePath(webhook)}/FeatureServer/extractChanges?serverGens=%5B${from},${to}%5D`,
    name: webhook.name,
    id: webhook.id,
    folderName: webhook.folderName,
    serviceName: webhook.serviceName,
    events: event.changeTypes.map((eventType) => ({ eventType, when: options.when })),
  };
}

/**
 * The body a GIS server would POST to `webhook.hookUrl` for `event`: JSON compact (`json`) or indented by
 * two spaces (`pjson`), sent as is or as the form `payload=<json>`, signed over the exact body bytes
 * when the webhook has a signature key.
 */
export function buildPayload(webhook: Webhook, event: EmulatorEvent, options: BuildPayloadOptions): BuiltPayload {
  const payload = payloadObject(webhook, event, options);
  const json = webhook.payloadFormat === 'pjson' ? JSON.stringify(payload, null, 2) : JSON.stringify(payload);
  const text = webhook.contentType === 'application/x-www-form-urlencoded' ? `payload=${encodeURIComponent(json)}` : json;
  const body = Buffer.from(text, 'utf8');
  const eventType = event.kind === 'gp' ? gpEventTypes[event.outcome] : event.changeTypes.join(',');
  const built: BuiltPayload = { body, contentType: webhook.contentType, eventType, signatureHeader: 'x-service' };
  if (webhook.signatureKey !== '') built.signature = sign(webhook.signatureKey, body);
  return built;
}
