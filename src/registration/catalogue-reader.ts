import { createAdminClient } from '../admin/admin-client.js';
import { recordServiceName } from '../admin/resolve-services.js';
import type { AdminAuth } from '../arcgis/admin-auth.js';
import type { ServiceName } from '../arcgis/service-name.js';

/** A reader of the server's catalogue: the name of every service one findServices lists (ArcGIS Enterprise). */
export function catalogueReader(adminUrl: string, auth: AdminAuth | undefined): () => Promise<ServiceName[]> {
  const client = createAdminClient({ baseUrl: adminUrl, ...(auth === undefined ? {} : { auth }) });
  return async () => (await client.findServices()).flatMap((record) => recordServiceName(record) ?? []);
}
