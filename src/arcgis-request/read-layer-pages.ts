import { pMapIterable } from 'p-map';
import type { EsriFeature } from './extract-changes.js';
import type { LayerInfo } from './layer-info.js';
import { parseExactJson } from './parse-exact-json.js';
import type { ServiceSession } from './service-session.js';

/**
 * Pages requested at once: one computed by the server while another travels and the one before is parsed (and,
 * in the mirror's copy, written).
 */
const PAGES_IN_FLIGHT = 3;

/** How a page of a layer's `query` is read, and what it is read into. */
export interface PageReading<P> {
  /** The checked answer of the `query` URL, read into a page. */
  read(session: ServiceSession, url: URL): Promise<P>;
  /** How many rows the page holds, and the object id of its last one. */
  extent(page: P): { rows: number; lastObjectId: unknown };
}

/** Pages read into their features (BigInteger values exact, as decimal strings). */
export const featurePages = (layer: LayerInfo): PageReading<EsriFeature[]> => ({
  async read(session, url) {
    const { features } = await session.read(url, undefined, parseExactJson);
    return Array.isArray(features) ? (features as EsriFeature[]) : [];
  },
  extent: (features) => ({ rows: features.length, lastObjectId: features.at(-1)?.attributes[layer.objectIdField] }),
});

/** A layer's `query` URL with `params`. */
function queryUrlOf(serviceUrl: URL, layer: LayerInfo, params: Record<string, string>): URL {
  const url = new URL(`${serviceUrl.href.replace(/\/+$/, '')}/${layer.id}/query`);
  url.search = new URLSearchParams(params).toString();
  return url;
}

/** Every object id of the layer, ascending (`returnIdsOnly`, which `maxRecordCount` does not limit). */
async function objectIdsOf(session: ServiceSession, serviceUrl: URL, layer: LayerInfo): Promise<number[]> {
  const { objectIds } = await session.read(queryUrlOf(serviceUrl, layer, { where: '1=1', returnIdsOnly: 'true' }));
  const ids = Array.isArray(objectIds) ? objectIds.filter((id): id is number => typeof id === 'number') : [];
  return ids.sort((a, b) => a - b);
}

/**
 * The rows whose object ids are above `after` and at most `last` (without a `last`: all of them), read page after
 * page, each after the last object id of the one before: a row deleted meanwhile shifts no other row out.
 */
async function* pagesAfter<P>(
  session: ServiceSession,
  serviceUrl: URL,
  layer: LayerInfo,
  reading: PageReading<P>,
  after: number,
  last?: number,
): AsyncGenerator<P> {
  const oid = layer.objectIdField;
  for (let from = after; ;) {
    const where = `${oid} > ${from}${last === undefined ? '' : ` AND ${oid} <= ${last}`}`;
    const url = queryUrlOf(serviceUrl, layer, {
      where,
      outFields: '*',
      returnGeometry: 'true',
      orderByFields: `${oid} ASC`,
      resultRecordCount: String(layer.maxRecordCount),
    });
    const page = await reading.read(session, url);
    const { rows, lastObjectId } = reading.extent(page);
    if (rows > 0) yield page;
    if (typeof lastObjectId !== 'number' || lastObjectId <= from || (last !== undefined && lastObjectId >= last)) return;
    from = lastObjectId;
  }
}

/** All pages of an async iterable. */
async function allOf<P>(pages: AsyncIterable<P>): Promise<P[]> {
  const all: P[] = [];
  for await (const page of pages) all.push(page);
  return all;
}

/**
 * Every row of a layer, in pages of at most `maxRecordCount` rows in object id order, read as `reading` says (into
 * features: {@link featurePages}). The object ids are read first (`returnIdsOnly`) and cut into ranges of `maxRecordCount`
 * ids, each read with `where <oid> > a AND <oid> <= b`, three at a time (see {@link PAGES_IN_FLIGHT}); then the rows added since the ids were read (`<oid> > ` the last id, page after
 * page). Rows edited meanwhile come as they are when their page is read.
 */
export async function* readLayerPages<P>(
  session: ServiceSession,
  serviceUrl: URL,
  layer: LayerInfo,
  reading: PageReading<P>,
): AsyncGenerator<P> {
  const ids = await objectIdsOf(session, serviceUrl, layer);
  const ranges: { after: number; last: number }[] = [];
  for (let start = 0; start < ids.length; start += layer.maxRecordCount) {
    ranges.push({ after: start === 0 ? 0 : ids[start - 1]!, last: ids[Math.min(start + layer.maxRecordCount, ids.length) - 1]! });
  }
  const ranged = pMapIterable(ranges, ({ after, last }) => allOf(pagesAfter(session, serviceUrl, layer, reading, after, last)), {
    concurrency: PAGES_IN_FLIGHT,
  });
  for await (const pages of ranged) yield* pages;
  yield* pagesAfter(session, serviceUrl, layer, reading, ids.at(-1) ?? 0);
}
