import { adminSiteUrl, restServicesUrl } from '../arcgis/rest-urls.js';
import { formatServiceName, isArcgisName, type ServiceName } from '../arcgis/service-name.js';
import { trustedUrls } from '../arcgis/trusted-urls.js';
import type { ServiceCatalogue } from './service-catalogue.js';

/** Options of {@link createCatalogueGate}. */
export interface CatalogueGateOptions {
  /** ADMIN_URL: the services under its site are those the catalogue judges. */
  adminUrl: string;
  /** The services geohook registers or polls (REGISTER, POLL): read without a look at the catalogue. */
  known: readonly ServiceName[];
  catalogue: ServiceCatalogue;
}

/**
 * Whether a feature service may be read: `read` (one geohook registers or polls, one the catalogue lists, or one
 * on another trusted server, which this catalogue does not cover), `unlisted` (under ADMIN_URL's site but not in
 * its catalogue: an invented name), or `unknown` (the catalogue could not be read yet).
 */
export type GateVerdict = 'read' | 'unlisted' | 'unknown';

/** Decides, before any request, whether geohook reads a service a delivery announced (docs/backfill.md#services-geohook-reads). */
export interface CatalogueGate {
  verdict(serviceUrl: URL): Promise<GateVerdict>;
}

/** `folder/name.FeatureServer` of a REST URL under `root` (`…/rest/services/`); undefined for any other shape. */
function serviceNameAt(serviceUrl: URL, root: string): ServiceName | undefined {
  const href = `${serviceUrl.origin}${serviceUrl.pathname}`;
  if (!href.toLowerCase().startsWith(root.toLowerCase())) return undefined;
  let parts: string[];
  try {
    parts = href.slice(root.length).split('/').map(decodeURIComponent);
  } catch {
    return undefined;
  }
  const [type, name = '', folder] = parts.reverse();
  if (parts.length > 3 || type?.toLowerCase() !== 'featureserver') return undefined;
  if (!isArcgisName(name) || (folder !== undefined && !isArcgisName(folder))) return undefined;
  return formatServiceName(folder, name, 'FeatureServer');
}

/** A {@link CatalogueGate} for the services under ADMIN_URL's site (ArcGIS Enterprise, whose findServices lists them). */
export function createCatalogueGate(options: CatalogueGateOptions): CatalogueGate {
  const site = trustedUrls([adminSiteUrl(options.adminUrl)]);
  const root = `${restServicesUrl(options.adminUrl)}/`;
  const known = new Set(options.known.map((service) => service.toLowerCase()));
  return {
    async verdict(serviceUrl) {
      if (!site.trusts(serviceUrl)) return 'read';
      const service = serviceNameAt(serviceUrl, root);
      if (service === undefined) return 'unlisted';
      if (known.has(service.toLowerCase())) return 'read';
      const listed = await options.catalogue.lists(service);
      return listed === undefined ? 'unknown' : listed ? 'read' : 'unlisted';
    },
  };
}
