import { adminSiteUrl, serviceRestUrl } from './rest-urls.js';
import type { ServiceName } from './service-name.js';
import { trustedUrls, type TrustedUrls } from './trusted-urls.js';

/** Options of {@link createServiceLocator}. */
export interface ServiceLocatorOptions {
  /** ADMIN_URL: its site is trusted, and the services of `pinned` are read beside it. */
  adminUrl?: string | undefined;
  /** The hook self-registration and polling deliver to (`default`), and the services they cover (REGISTER, POLL). */
  pinned?: { hook: string; services: readonly ServiceName[] };
  /** Further URL prefixes trusted on every hook (TRUSTED_ORIGINS). */
  trusted?: readonly string[];
  /** Further URL prefixes trusted on one hook (`hooks[].trustedOrigins`). */
  trustedByHook?: ReadonlyMap<string, readonly string[]>;
}

/**
 * Where geohook reads the edits a feature delivery announces (docs/backfill.md#where-gaps-are-filled): never where
 * a payload alone says. A range is tracked only when its `changesUrl` is under a trusted URL; the service is
 * then read beside ADMIN_URL when geohook registers or polls it, else at the payload's trusted URL.
 */
export interface ServiceLocator {
  /** The URLs trusted on `hook`: ADMIN_URL's site, TRUSTED_ORIGINS and the hook's own. */
  trusted(hook: string): TrustedUrls;
  /**
   * The REST URL (`…/FeatureServer`) geohook reads `service` at for a range `changesUrl` announced on `hook`;
   * undefined when `changesUrl` is not trusted, or names no feature service.
   */
  locate(hook: string, service: ServiceName, changesUrl: URL): URL | undefined;
}

const FEATURE_SERVER = /\/FeatureServer(\/|$)/i;

/** A {@link ServiceLocator}; without any option it trusts nothing and tracks no range. */
export function createServiceLocator(options: ServiceLocatorOptions = {}): ServiceLocator {
  const { adminUrl, pinned } = options;
  const common = [...(adminUrl === undefined ? [] : [adminSiteUrl(adminUrl)]), ...(options.trusted ?? [])];
  const pinnedServices = new Set(pinned?.services.map((service) => service.toLowerCase()));
  const byHook = new Map<string, TrustedUrls>();
  const trusted = (hook: string): TrustedUrls => {
    let urls = byHook.get(hook);
    if (urls === undefined) {
      urls = trustedUrls([...common, ...(options.trustedByHook?.get(hook) ?? [])]);
      byHook.set(hook, urls);
    }
    return urls;
  };
  return {
    trusted,
    locate(hook, service, changesUrl) {
      if (!trusted(hook).trusts(changesUrl)) return undefined;
      if (adminUrl !== undefined && hook === pinned?.hook && pinnedServices.has(service.toLowerCase())) {
        return serviceRestUrl(adminUrl, service);
      }
      const at = changesUrl.pathname.search(FEATURE_SERVER);
      return at < 0 ? undefined : new URL(`${changesUrl.origin}${changesUrl.pathname.slice(0, at)}/FeatureServer`);
    },
  };
}
