import { resolveServices } from '../admin/resolve-services.js';
import type { AdminClient } from '../admin/types.js';
import { isPattern, type ServiceName } from '../arcgis/service-name.js';

/** Services doctor checks one by one when REGISTER names more, or holds a pattern. */
export const DETAIL_LIMIT = 10;

/** What doctor checks of REGISTER's services. */
export interface DoctorSelection {
  /** Checked one by one. */
  services: ServiceName[];
  /** Named services the GIS server does not have. */
  missing: ServiceName[];
  /** Services REGISTER names on this server, patterns resolved (the missing ones included). */
  total: number;
}

/**
 * The services to check: every one REGISTER names when it names at most {@link DETAIL_LIMIT} and no pattern; otherwise
 * (a large organisation) the entries resolved against the catalogue once, the missing named ones reported from it,
 * and only those the receiver recorded as failing, and the first service for the round trip, checked one by one.
 */
export async function selectServices(
  client: AdminClient,
  entries: readonly ServiceName[],
  failing: readonly ServiceName[],
): Promise<DoctorSelection> {
  if (!entries.some(isPattern) && entries.length <= DETAIL_LIMIT) return { services: [...entries], missing: [], total: entries.length };
  if (client.product === 'online') {
    const services = [...new Set([...failing.filter((service) => entries.includes(service)), ...entries.slice(0, 1)])];
    return { services: services.slice(0, DETAIL_LIMIT), missing: [], total: entries.length };
  }
  const { services: resolved, missing } = resolveServices(entries, await client.findServices());
  const known = new Set(resolved);
  const services = [...new Set([...failing.filter((service) => known.has(service)), ...resolved.slice(0, 1)])];
  return { services: services.slice(0, DETAIL_LIMIT), missing, total: resolved.length + missing.length };
}
