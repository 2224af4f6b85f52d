import { isOnlineAdminRoot } from './online-admin.js';
import { parseServiceName, type ServiceName } from './service-name.js';

/** The REST services root beside an admin API URL: `…/arcgis/admin` → `…/arcgis/rest/services`, `…/rest/admin` → `…/rest/services`. */
export function restServicesUrl(adminUrl: string): string {
  const base = adminUrl.replace(/\/+$/, '');
  return isOnlineAdminRoot(base) ? base.replace(/\/admin$/i, '/services') : base.replace(/\/admin$/i, '/rest/services');
}

/** A service's REST resource beside an admin API URL: `<rest services>/<folder>/<name>/<Type>`. */
export function serviceRestUrl(adminUrl: string, service: ServiceName): URL {
  const { folder, name, type } = parseServiceName(service);
  const path = [...(folder === undefined ? [] : [folder]), name].map(encodeURIComponent).join('/');
  return new URL(`${restServicesUrl(adminUrl)}/${path}/${type}`);
}

/**
 * The site an admin API belongs to, where its services, jobs and tokens are: `…/arcgis/admin` → `…/arcgis/`, an
 * organization's `…/<orgId>/ArcGIS/rest/admin` → `…/<orgId>/ArcGIS/`. geohook trusts it with its token.
 */
export function adminSiteUrl(adminUrl: string): string {
  const base = adminUrl.replace(/\/+$/, '');
  return `${isOnlineAdminRoot(base) ? base.replace(/\/rest\/admin$/i, '') : base.replace(/\/admin$/i, '')}/`;
}
