import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { isOnlineAdminRoot } from '../arcgis/online-admin.js';
import { adminSiteUrl, serviceRestUrl } from '../arcgis/rest-urls.js';
import type { ServiceName } from '../arcgis/service-name.js';
import { trustedUrls } from '../arcgis/trusted-urls.js';
import { readServerGens, scopeGeneration } from '../arcgis-request/server-generations.js';
import { createServiceSession } from '../arcgis-request/service-session.js';
import { scopeOf, type TrackedRange } from '../events/tracked-ranges.js';
import type { EventQueue } from '../queue/event-queue.js';

/** Options of {@link checkGenerations}. */
export interface GenerationCheckOptions {
  eventQueue: EventQueue;
  /** The hook the service delivers to. */
  hook: string;
  /** The admin API (ADMIN_URL): the services' REST resources are beside it. */
  adminUrl: string;
  /** Credentials for the service's REST resource (their token URL resolved); none: read without a token. */
  auth?: ResolvedAdminAuth;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** `poll`: the gaps found are reported as polled. */
  source?: 'poll';
}

/**
 * Brings a feature service's watermarks up to its current generations (`changeTrackingInfo.layerServerGens`
 * of its REST resource), docs/backfill.md: a scope without a watermark starts there (history is not
 * replayed); one behind records the gap in between, which the backfill fills. Run at start-up and after a
 * webhook was reactivated or recreated, it recovers what the server did not deliver meanwhile. Returns the
 * generations read; none for a service without change tracking.
 */
export async function checkGenerations(service: ServiceName, options: GenerationCheckOptions): Promise<TrackedRange[]> {
  const serviceUrl = serviceRestUrl(options.adminUrl, service);
  const session = createServiceSession({
    trusted: trustedUrls([adminSiteUrl(options.adminUrl)]),
    ...(options.auth === undefined ? {} : { auth: options.auth }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const layers = await readServerGens(session, serviceUrl);
  if (layers.length === 0) return [];
  const at = (serverGen: number, layerId?: number): TrackedRange => ({
    scope: scopeOf(options.hook, service, layerId),
    from: serverGen,
    to: serverGen,
    serviceUrl: serviceUrl.href,
    ...(options.source === undefined ? {} : { source: options.source }),
  });
  // ArcGIS Online's deliveries name their layer: a watermark per layer. ArcGIS Enterprise's cover the service.
  const ranges = isOnlineAdminRoot(options.adminUrl)
    ? layers.map((layer) => at(layer.serverGen, layer.id))
    : [at(scopeGeneration(layers, undefined)!)];
  await options.eventQueue.reserve(options.hook, ranges, options.source === 'poll' ? { kind: 'poll', service } : undefined);
  return ranges;
}
