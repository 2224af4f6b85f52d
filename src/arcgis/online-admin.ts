import { GeohookError } from '../errors.js';
import { isResolvedAuth, type AdminAuth, type ResolvedAdminAuth } from './admin-auth.js';
import type { ServiceName } from './service-name.js';
import type { OnlineWebhook, Webhook } from './webhook.js';

const ONLINE_ADMIN_ROOT = /\/ArcGIS\/rest\/admin\/?$/i;
const HOSTED_SERVICE = /^([^/.]+)(?:\.FeatureServer)?$/;

/** True for an ArcGIS Online organization's admin root, `https://<host>/<orgId>/ArcGIS/rest/admin`. */
export function isOnlineAdminRoot(baseUrl: string): boolean {
  try {
    return ONLINE_ADMIN_ROOT.test(new URL(baseUrl).pathname);
  } catch {
    return false;
  }
}

/** The organization id of an ArcGIS Online admin root (`https://<host>/<orgId>/ArcGIS/rest/admin`); `undefined` for any other URL. */
export const onlineOrgIdOf = (baseUrl: string): string | undefined =>
  isOnlineAdminRoot(baseUrl) ? /\/([^/]+)\/ArcGIS\/rest\/admin\/?$/i.exec(baseUrl)?.[1] : undefined;

/** Where tokens for an organization come from: `<origin>/sharing/rest/generateToken`. */
export const onlineTokenUrl = (baseUrl: string): string => `${new URL(baseUrl).origin}/sharing/rest/generateToken`;

/**
 * The credentials to use with an admin root, with the URL tokens come from: the one they name (TOKEN_URL), else an
 * organization's portal (`<origin>/sharing/rest/generateToken`), else `<admin root>/generateToken`.
 */
export function adminAuthFor(baseUrl: string, auth: AdminAuth | undefined): ResolvedAdminAuth | undefined {
  if (auth === undefined || isResolvedAuth(auth)) return auth;
  const tokenUrl = isOnlineAdminRoot(baseUrl) ? onlineTokenUrl(baseUrl) : `${baseUrl.replace(/\/+$/, '')}/generateToken`;
  return { ...auth, tokenUrl };
}

/**
 * `services/<name>/FeatureServer/WebHooks` of a hosted feature service, named `name` or `name.FeatureServer`
 * (Online has no folders and no other service type with webhooks).
 */
export function onlineWebhooksPath(service: ServiceName): string {
  const match = typeof service === 'string' ? HOSTED_SERVICE.exec(service.trim()) : null;
  if (match === null) {
    throw new GeohookError(
      'GEOHOOK_ERR_ADMIN_INVALID',
      `service: ArcGIS Online webhooks are on hosted feature services, named name or name.FeatureServer, got ${JSON.stringify(service)}`,
    );
  }
  return `services/${encodeURIComponent(match[1]!)}/FeatureServer/WebHooks`;
}

/** An Online webhook as the Enterprise record geohook works with: `globalId` is its `id`, the owner both users. */
export function webhookOfOnline(hook: OnlineWebhook): Webhook {
  const { globalId, serviceName, owner, ...fields } = hook;
  return { id: globalId, folderName: '', serviceName, serviceType: 'FeatureServer', ...fields, ownerId: owner, modifiedId: owner };
}
