import { formatServiceName, isArcgisName, isPattern, patternMatcher, type ServiceName } from '../arcgis/service-name.js';
import type { ServiceRecord } from './types.js';

/** The service types that take webhooks: a pattern matches only these. */
const WEBHOOK_TYPES: ReadonlySet<string> = new Set(['FeatureServer', 'GPServer']);

/** `folder/name.Type` of a findServices record; the root folder (`/` or empty) is none. */
export const recordServiceName = (record: ServiceRecord): ServiceName | undefined =>
  formatServiceName(record.folderName === '/' ? '' : record.folderName, record.serviceName, record.type);

/** What the configured entries name on a server. */
export interface ResolvedServices {
  /** The services to register: the named ones the catalogue has, and every webhook-capable one a pattern matches. */
  services: ServiceName[];
  /** Named services the catalogue does not have. */
  missing: ServiceName[];
  /** Patterns that matched no service. */
  unmatched: string[];
}

/** True for a record whose folder and name ArcGIS could have made (at most 128 characters each): the only ones patterns are matched against. */
const hasArcgisNames = (record: ServiceRecord): boolean =>
  isArcgisName(record.serviceName) && (record.folderName === '/' || record.folderName === '' || isArcgisName(record.folderName));

/**
 * Resolves REGISTER's entries (service names and patterns, see {@link patternMatcher}) against the server's catalogue
 * (one findServices call): each service once, in the catalogue's order after the named ones. A pattern matches
 * only webhook-capable services whose folder and name ArcGIS could have made.
 */
export function resolveServices(entries: readonly string[], catalogue: readonly ServiceRecord[]): ResolvedServices {
  const known = catalogue.flatMap((record) => recordServiceName(record) ?? []);
  const knownSet = new Set(known);
  const named = entries.filter((entry) => !isPattern(entry));
  const patterns = entries.filter(isPattern).map((pattern) => ({ pattern, matches: patternMatcher(pattern), matched: false }));
  const services = new Set(named.filter((service) => knownSet.has(service)));
  for (const record of catalogue) {
    const service = recordServiceName(record);
    if (service === undefined || !WEBHOOK_TYPES.has(record.type) || !hasArcgisNames(record)) continue;
    for (const pattern of patterns) {
      if (!pattern.matches(service)) continue;
      pattern.matched = true;
      services.add(service);
    }
  }
  return {
    services: [...services],
    missing: named.filter((service) => !knownSet.has(service)),
    unmatched: patterns.filter((pattern) => !pattern.matched).map((pattern) => pattern.pattern),
  };
}
