/**
 * The URLs geohook may send a request or a token to (docs/production.md#what-goes-where): configuration names
 * them, a payload never does. An entry that is an origin (`https://gis.example.com`) trusts every path of it;
 * an entry with a path (`https://services.arcgis.com/<orgId>/ArcGIS/`) trusts the paths under it, compared
 * without regard to case as ArcGIS compares them.
 */
export interface TrustedUrls {
  /** True when `url` is http(s), carries no user name or password, and is on an entry's origin under its path. */
  trusts(url: URL): boolean;
  /** The entries, normalised (`origin/path/`), for messages. */
  readonly entries: readonly string[];
}

interface Entry {
  origin: string;
  /** Lower-cased, ending with `/`. */
  path: string;
}

const isHttp = (url: URL): boolean => url.protocol === 'http:' || url.protocol === 'https:';

/** An entry as geohook compares it; throws a TypeError for a value that is not an http(s) URL without credentials. */
function entryOf(value: string | URL): Entry {
  const url = new URL(value);
  if (!isHttp(url) || url.username !== '' || url.password !== '')
    throw new TypeError(`not an http(s) URL without credentials: ${url.origin}`);
  const path = url.pathname.toLowerCase();
  return { origin: url.origin, path: path.endsWith('/') ? path : `${path}/` };
}

/** The {@link TrustedUrls} of `entries` (origins or URL prefixes); none trusts nothing. */
export function trustedUrls(entries: readonly (string | URL)[]): TrustedUrls {
  const parsed = entries.map(entryOf);
  return {
    entries: parsed.map(({ origin, path }) => `${origin}${path}`),
    trusts(url) {
      if (!isHttp(url) || url.username !== '' || url.password !== '') return false;
      const path = `${url.pathname.toLowerCase()}/`;
      return parsed.some((entry) => entry.origin === url.origin && path.startsWith(entry.path));
    },
  };
}
