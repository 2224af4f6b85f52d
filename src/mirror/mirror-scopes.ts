import { isOnlineAdminRoot } from '../arcgis/online-admin.js';
import { serviceRestUrl } from '../arcgis/rest-urls.js';
import { readServiceLayers } from '../arcgis-request/layer-info.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { scopeOf } from '../events/tracked-ranges.js';
import type { MirrorScope } from './sync-scope.js';

/** A scope the mirror follows and the ids of the layers it mirrors. */
export interface FollowedScope extends MirrorScope {
  layerIds: number[];
}

/**
 * The scopes of a mirrored service, read from its resource now: the service's own on ArcGIS Enterprise (all its
 * layers and tables), one per layer on ArcGIS Online, as the watermarks are kept.
 */
export async function mirrorScopesOf(session: ServiceSession, adminUrl: string, hook: string, service: string): Promise<FollowedScope[]> {
  const serviceUrl = serviceRestUrl(adminUrl, service);
  const ids = (await readServiceLayers(session, serviceUrl)).layers.map((layer) => layer.id);
  if (!isOnlineAdminRoot(adminUrl)) return [{ scope: scopeOf(hook, service), service, serviceUrl, layerIds: ids }];
  return ids.map((id) => ({ scope: scopeOf(hook, service, id), service, serviceUrl, layerId: id, layerIds: [id] }));
}
