import { pMapIterable } from 'p-map';
import type { EsriFeature } from '../arcgis-request/extract-changes.js';
import { parseExactJson } from '../arcgis-request/parse-exact-json.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import type { LayerInfo } from './layer-info.js';

/** Pages requested at once: one answered while the next is computed by the server and the one before is written. */
const PAGES_IN_FLIGHT = 2;

/** A layer's `query` resource read with `where` (every field, the geometry, in object id order). */
async function queryRows(session: ServiceSession, serviceUrl: URL, layer: LayerInfo, where: string): Promise<Record<string, unknown>> {
  const url = new URL(`${serviceUrl.href.replace(/\/+$/, '')}/${layer.id}/query`);
  url.search = new URLSearchParams({
    where,
    outFields: '*',
    returnGeometry: 'true',
    orderByFields: `${layer.objectIdField} ASC`,
    resultRecordCount: String(layer.maxRecordCount),
  }).toString();
  return session.read(url, undefined, parseExactJson);
}

/** Every object id of the layer, ascending (`returnIdsOnly`, which `maxRecordCount` does not limit). */
async function objectIdsOf(session: ServiceSession, serviceUrl: URL, layer: LayerInfo): Promise<number[]> {
  const url = new URL(`${serviceUrl.href.replace(/\/+$/, '')}/${layer.id}/query`);
  url.search = new URLSearchParams({ where: '1=1', returnIdsOnly: 'true' }).toString();
  const { objectIds } = await session.read(url);
  const ids = Array.isArray(objectIds) ? objectIds.filter((id): id is number => typeof id === 'number') : [];
  return ids.sort((a, b) => a - b);
}

/**
 * The rows whose object ids are above `after` and at most `last` (without a `last`: all of them), read page after
 * page, each after the last object id of the one before: a row deleted meanwhile shifts no other row out.
 */
async function* rowsAfter(
  session: ServiceSession,
  serviceUrl: URL,
  layer: LayerInfo,
  after: number,
  last?: number,
): AsyncGenerator<EsriFeature[]> {
  const oid = layer.objectIdField;
  for (let from = after; ;) {
    const answer = await queryRows(session, serviceUrl, layer, `${oid} > ${from}${last === undefined ? '' : ` AND ${oid} <= ${last}`}`);
    const features = Array.isArray(answer.features) ? (answer.features as EsriFeature[]) : [];
    if (features.length > 0) yield features;
    const lastRead = features.at(-1)?.attributes[oid];
    if (typeof lastRead !== 'number' || lastRead <= from || (last !== undefined && lastRead >= last)) return;
    from = lastRead;
  }
}

/** All pages of an async iterable, joined into one array. */
async function allOf(pages: AsyncIterable<EsriFeature[]>): Promise<EsriFeature[]> {
  const rows: EsriFeature[] = [];
  for await (const page of pages) rows.push(...page);
  return rows;
}

/**
 * Every row of a layer, in pages of at most `maxRecordCount` rows in object id order. The object ids are read first
 * (`returnIdsOnly`) and cut into ranges of `maxRecordCount` ids, each read with `where <oid> > a AND <oid> <= b`, two
 * at a time, so that the server computes a page while the one before travels and is written; then the rows added
 * since the ids were read (`<oid> > ` the last id, page after page). Rows edited meanwhile come as they are when
 * their page is read. BigInteger values are read exactly (decimal strings).
 */
export async function* readLayerPages(session: ServiceSession, serviceUrl: URL, layer: LayerInfo): AsyncGenerator<EsriFeature[]> {
  const ids = await objectIdsOf(session, serviceUrl, layer);
  const ranges: { after: number; last: number }[] = [];
  for (let start = 0; start < ids.length; start += layer.maxRecordCount) {
    ranges.push({ after: start === 0 ? 0 : ids[start - 1]!, last: ids[Math.min(start + layer.maxRecordCount, ids.length) - 1]! });
  }
  const pages = pMapIterable(ranges, ({ after, last }) => allOf(rowsAfter(session, serviceUrl, layer, after, last)), {
    concurrency: PAGES_IN_FLIGHT,
  });
  for await (const page of pages) if (page.length > 0) yield page;
  yield* rowsAfter(session, serviceUrl, layer, ids.at(-1) ?? 0);
}
