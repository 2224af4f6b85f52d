/**
 * Where geohook reads a URL that a trusted server's answer names (an asynchronous job's `statusUrl`, its
 * `resultUrl`, a redirect of the result; docs/backfill.md#where-gaps-are-filled): on the origin of the URL that
 * named it, or on signed storage. Anything else is refused unsent, so that a server (compromised, or a man in the
 * middle of plain http) cannot make geohook call into its own network.
 */
export interface NamedUrls {
  /** True when `url` is http(s) without credentials, on `namedBy`'s origin or on signed storage. */
  allows(url: URL, namedBy: URL): boolean;
  /** The signed-storage entries, for messages. */
  readonly storage: readonly string[];
}

/** ArcGIS Online's signed storage (its result files redirect to `https://<account>.az.arcgis.com/…`). */
export const ONLINE_STORAGE: readonly string[] = ['https://*.arcgis.com'];

interface StorageEntry {
  protocol: string;
  /** Lower case; with `anySubdomain`, the suffix after `*.`. */
  hostname: string;
  anySubdomain: boolean;
  /** `''` for the protocol's default port, as `URL.port` has it. */
  port: string;
}

const ENTRY = /^(https?):\/\/(\*\.)?([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?\/?$/i;

/** A storage entry (`https://*.arcgis.com`, `https://files.example.com:8443`); a TypeError for anything else. */
function entryOf(value: string): StorageEntry {
  const match = ENTRY.exec(value.trim());
  if (match === null) throw new TypeError(`not an http(s) origin, optionally with "*." before its host: ${JSON.stringify(value)}`);
  const [, scheme = '', star, host = ''] = match;
  // URL normalises the host and drops a default port, as it does for the URLs compared with it.
  const url = new URL(`${scheme}://${host}${match[4] === undefined ? '' : `:${match[4]}`}`);
  return { protocol: url.protocol, hostname: url.hostname, anySubdomain: star !== undefined, port: url.port };
}

const storageHas = (entry: StorageEntry, url: URL): boolean =>
  entry.protocol === url.protocol &&
  entry.port === url.port &&
  (entry.anySubdomain ? url.hostname.endsWith(`.${entry.hostname}`) : url.hostname === entry.hostname);

/** The {@link NamedUrls} of `storage` origins (`*.` before a host allows its subdomains); throws a TypeError for a malformed entry. */
export function namedUrls(storage: readonly string[] = ONLINE_STORAGE): NamedUrls {
  const entries = storage.map(entryOf);
  return {
    storage,
    allows(url, namedBy) {
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') return false;
      return url.origin === namedBy.origin || entries.some((entry) => storageHas(entry, url));
    },
  };
}
