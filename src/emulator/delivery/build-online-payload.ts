import type { OnlineWebhook } from '../../arcgis/webhook.js';
import { sign } from '../../signature/sign.js';
import type { EmulatorEvent } from '../types.js';
import type { BuiltPayload } from './build-payload.js';

/** What an ArcGIS Online webhook delivers: an edit of a layer, or the test ping of its `status` operation. */
export type OnlineEvent = Extract<EmulatorEvent, { kind: 'feature' }> | { kind: 'ping' };

/** Options of {@link buildOnlinePayload}. */
export interface BuildOnlinePayloadOptions {
  /** The organization's REST services root, e.g. `http://127.0.0.1:7080/geohookOrg/ArcGIS/rest/services`. */
  restBaseUrl: string;
  orgId: string;
  /** Time of the event (epoch ms), written as `lastUpdatedTime`. */
  when: number;
}

/** Percent-encoded as a whole with lower-case hex, as ArcGIS Online sends `changesUrl` (`https%3a%2f%2f…`). */
const onlineEncoded = (url: string): string => encodeURIComponent(url).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());

/** The payload array, in the field order of ArcGIS Online's deliveries (docs/events.md). */
function payloadArray(hook: OnlineWebhook, event: OnlineEvent, options: BuildOnlinePayloadOptions): Record<string, unknown>[] {
  const common = { name: hook.name };
  if (event.kind === 'ping') {
    return [{ ...common, orgId: options.orgId, serviceName: hook.serviceName, lastUpdatedTime: options.when, events: ['NoContent'] }];
  }
  const [from, to] = event.serverGens;
  const root = options.restBaseUrl.replace(/\/+$/, '');
  const changesUrl = `${root}/${encodeURIComponent(hook.serviceName)}/FeatureServer/extractChanges?serverGens=[${from},${to}]&async=true&returnAttachments=false`;
  return [
    {
      ...common,
      layerId: event.layerId,
      orgId: options.orgId,
      serviceName: hook.serviceName,
      lastUpdatedTime: options.when,
      changesUrl: onlineEncoded(changesUrl),
      events: [...event.changeTypes],
    },
  ];
}

/**
 * The body ArcGIS Online would POST to `hook.hookUrl`: the JSON array, signed in the `x-esriHook-Signature`
 * header; or the form `payload=<the JSON as is>&x-esriHook-Signature=<signature>`, signed in that field over
 * the JSON's bytes, as Esri's sample receivers verify it.
 */
export function buildOnlinePayload(hook: OnlineWebhook, event: OnlineEvent, options: BuildOnlinePayloadOptions): BuiltPayload {
  const items = payloadArray(hook, event, options);
  const json = hook.payloadFormat === 'pjson' ? JSON.stringify(items, null, 2) : JSON.stringify(items);
  const signature = hook.signatureKey === '' ? undefined : sign(hook.signatureKey, json);
  const eventType = event.kind === 'ping' ? 'NoContent' : event.changeTypes.join(',');
  const built: BuiltPayload = {
    body: Buffer.from(json),
    contentType: hook.contentType,
    eventType,
    signatureHeader: 'x-esriHook-Signature',
  };
  if (hook.contentType === 'application/x-www-form-urlencoded') {
    built.body = Buffer.from(`payload=${json}${signature === undefined ? '' : `&x-esriHook-Signature=${encodeURIComponent(signature)}`}`);
  } else if (signature !== undefined) {
    built.signature = signature;
  }
  return built;
}
