import { createServiceLocator, type ServiceLocator } from '../arcgis/service-locator.js';
import { REGISTERED_HOOK } from './self-registration.js';
import type { GeohookConfig } from './types.js';

/** The {@link ServiceLocator} of a configuration: ADMIN_URL (its REGISTER and POLL services pinned beside it), TRUSTED_ORIGINS, each hook's own. */
export function serviceLocatorOf(config: GeohookConfig): ServiceLocator {
  const { admin } = config;
  return createServiceLocator({
    adminUrl: admin?.url,
    pinned: { hook: REGISTERED_HOOK, services: admin === undefined ? [] : [...admin.register, ...admin.poll] },
    trusted: config.trustedOrigins,
    trustedByHook: new Map([...config.hooks].map(([name, hook]) => [name, hook.trustedOrigins])),
  });
}
