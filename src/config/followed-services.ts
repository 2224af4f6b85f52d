import { isPattern, patternMatcher } from '../arcgis/service-name.js';
import type { GeohookConfig } from './load-config.js';

/**
 * The services of CHANGES and MIRROR whose edits nothing geohook runs brings: neither REGISTER (nor `register` of
 * GEOHOOK_CONFIG) names them or a pattern of them, nor POLL. Only the deliveries of a webhook registered by other
 * means move them on; without one, a mirrored table gets its initial copy and nothing after, and change events none.
 */
export function servicesWithoutEdits(config: GeohookConfig): string[] {
  if (config.admin === undefined) return [];
  const { register, poll, changes } = config.admin;
  const patterns = register.filter(isPattern).map(patternMatcher);
  const followed = (service: string): boolean =>
    register.includes(service) || poll.includes(service) || patterns.some((matches) => matches(service));
  return [...new Set([...changes.services, ...(config.mirror?.services ?? [])])].filter((service) => !followed(service));
}
