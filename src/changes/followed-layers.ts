import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { serviceRestUrl } from '../arcgis/rest-urls.js';
import type { TrustedUrls } from '../arcgis/trusted-urls.js';
import { readServiceLayers, type LayerInfo } from '../arcgis-request/layer-info.js';
import { createServiceSession } from '../arcgis-request/service-session.js';

/** A followed service's layer definitions, or why they could not be read. */
export type FollowedLayers = { service: string; layers: LayerInfo[] } | { service: string; error: Error };

/** Options of {@link readFollowedLayers}. */
export interface FollowedLayersOptions {
  adminUrl: string;
  services: readonly string[];
  trusted: TrustedUrls;
  auth?: ResolvedAdminAuth;
  /** Longest wait for one service's definitions, ms. @defaultValue 15000 */
  deadlineMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

/** The layer definitions of each service followed for change events, read from its server (two requests each), at once. */
export function readFollowedLayers(options: FollowedLayersOptions): Promise<FollowedLayers[]> {
  return Promise.all(
    options.services.map(async (service): Promise<FollowedLayers> => {
      const session = createServiceSession({
        trusted: options.trusted,
        deadlineMs: options.deadlineMs ?? 15_000,
        ...(options.auth === undefined ? {} : { auth: options.auth }),
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
      });
      try {
        return { service, layers: (await readServiceLayers(session, serviceRestUrl(options.adminUrl, service))).layers };
      } catch (err) {
        return { service, error: err instanceof Error ? err : new Error(String(err)) };
      }
    }),
  );
}
