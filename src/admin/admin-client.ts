import { adminAuthFor, isOnlineAdminRoot } from '../arcgis/online-admin.js';
import { createTokenProvider } from '../arcgis-request/token-provider.js';
import { createAdminRequest } from './admin-request.js';
import { createOnlineWebhooksResource } from './online-webhooks-resource.js';
import { createPlacementResource } from './placement-resource.js';
import { createServicesResource } from './services-resource.js';
import { createSettingsResource } from './settings-resource.js';
import type { AdminClient, AdminClientOptions } from './types.js';
import { invalidArgument } from './validate-input.js';
import { createWebhooksResource } from './webhooks-resource.js';

export type { AdminClient, AdminClientOptions, FindServicesFilters, ServiceRecord } from './types.js';

/** The admin root without a trailing slash; a query string is refused (and not echoed: it may hold a token). */
function checkBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw invalidArgument('baseUrl: must be an http or https URL of the admin root, e.g. http://127.0.0.1:7080/arcgis/admin');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw invalidArgument(`baseUrl: must be an http or https URL, got ${url.protocol}`);
  if (url.search !== '' || url.hash !== '')
    throw invalidArgument('baseUrl: must have no query string or fragment (pass a token with auth)');
  return url.toString().replace(/\/+$/, '');
}

/** Reads are retried after these waits. */
const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [200, 1000, 3000];

/**
 * A client of the service administration API (docs/admin.md) and of what the real product adds (list,
 * get, edit, notificationStatus…). An ArcGIS Online organization's admin root
 * (`https://<host>/<orgId>/ArcGIS/rest/admin`) gets its hosted feature layers' webhooks, with tokens from
 * `<host>/sharing/rest/generateToken`. Every call is a form POST with the token in the body; errors are
 * `AdminApiError` / `AdminAuthError`; invalid arguments are refused with `GEOHOOK_ERR_ADMIN_INVALID` before
 * anything is sent.
 */
export function createAdminClient(options: AdminClientOptions): AdminClient {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const fetchFn = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const online = isOnlineAdminRoot(baseUrl);
  const auth = adminAuthFor(baseUrl, options.auth);
  const tokens = createTokenProvider({ auth, fetch: fetchFn, timeoutMs });
  const request = createAdminRequest({
    baseUrl,
    tokens,
    fetch: fetchFn,
    timeoutMs,
    retryDelaysMs: options.retry?.delaysMs ?? DEFAULT_RETRY_DELAYS_MS,
  });
  return {
    product: online ? 'online' : 'enterprise',
    webhooks: online ? createOnlineWebhooksResource(request) : createWebhooksResource(request),
    settings: createSettingsResource(request),
    placement: createPlacementResource(request),
    ...createServicesResource(request),
    info: () => request.send('', {}, { idempotent: true }) as ReturnType<AdminClient['info']>,
  };
}
