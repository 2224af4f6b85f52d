/**
 * A feature delivery's `changesUrl`: the service's `extractChanges` for the server generations the edits
 * span. ArcGIS Enterprise sends it plain; ArcGIS Online sends it plain or percent-encoded as a whole
 * (`https%3a%2f%2f…`), and its `serverGens` may be percent-encoded again inside.
 */

/** Where a feature delivery's edits are (docs/events.md#changes). */
export interface ChangesLocation {
  /** The `extractChanges` URL, decoded once when it was sent percent-encoded as a whole. */
  url: string;
  /** The server generations the edits span, `[from, to]`, read from the URL's `serverGens`. */
  serverGens: [number, number];
  /** The layer the delivery names (ArcGIS Online items carry `layerId`). */
  layerId?: number;
}

/**
 * A URL a payload carries (`changesUrl`, `statusURL`) as an http(s) URL, decoded once first when it is
 * percent-encoded as a whole; undefined when it is none.
 */
export function decodePayloadUrl(value: unknown): URL | undefined {
  if (typeof value !== 'string') return undefined;
  let text = value.trim();
  try {
    if (/^https?%3a/i.test(text)) text = decodeURIComponent(text);
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    // Not a URL, or an escape that decodes to no character (`%AB` alone).
    return undefined;
  }
}

/** `serverGens=[from,to]` of an `extractChanges` URL, two whole numbers with from ≤ to; undefined otherwise. */
export function serverGensOf(url: URL): [number, number] | undefined {
  const raw = url.searchParams.get('serverGens');
  if (raw === null) return undefined;
  let gens: unknown;
  try {
    gens = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!Array.isArray(gens) || gens.length !== 2) return undefined;
  const [from, to] = gens as unknown[];
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || (from as number) < 0 || (from as number) > (to as number))
    return undefined;
  return [from as number, to as number];
}

/** The decoded change location of one payload item, or undefined when its `changesUrl` names none. */
export function changesLocationOf(item: unknown): ChangesLocation | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
  const { changesUrl, layerId } = item as { changesUrl?: unknown; layerId?: unknown };
  const url = decodePayloadUrl(changesUrl);
  const serverGens = url === undefined ? undefined : serverGensOf(url);
  if (url === undefined || serverGens === undefined) return undefined;
  return { url: url.href, serverGens, ...(Number.isSafeInteger(layerId) ? { layerId: layerId as number } : {}) };
}
