import type { EsriFeature } from '../arcgis-request/extract-changes.js';
import { parseExactJson } from '../arcgis-request/parse-exact-json.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import type { LayerInfo } from '../changes/layer-info.js';

/** A page of rows, and the object id the next one starts after (`undefined`: it is the last). */
interface Page {
  features: EsriFeature[];
  next?: number;
}

/** The page of rows after object id `last`. */
async function pageAfter(session: ServiceSession, serviceUrl: URL, layer: LayerInfo, last: number): Promise<Page> {
  const url = new URL(`${serviceUrl.href.replace(/\/+$/, '')}/${layer.id}/query`);
  url.search = new URLSearchParams({
    where: `${layer.objectIdField} > ${last}`,
    outFields: '*',
    returnGeometry: 'true',
    orderByFields: `${layer.objectIdField} ASC`,
    resultRecordCount: String(layer.maxRecordCount),
  }).toString();
  const answer = await session.read(url, undefined, parseExactJson);
  const features = Array.isArray(answer.features) ? (answer.features as EsriFeature[]) : [];
  const lastId = features.at(-1)?.attributes[layer.objectIdField];
  return typeof lastId === 'number' && lastId > last ? { features, next: lastId } : { features };
}

/**
 * Every row of a layer, read with `query` a page of `maxRecordCount` rows at a time, in object id order, each page
 * after the last object id read (`where <oid> > last`), not at an offset: a row deleted meanwhile shifts no other
 * row out of the pages. The next page is requested while the rows of one are consumed. Rows edited meanwhile come
 * as they are when their page is read. BigInteger values are read exactly (decimal strings).
 */
export async function* readLayerRows(session: ServiceSession, serviceUrl: URL, layer: LayerInfo): AsyncGenerator<EsriFeature> {
  let page: Promise<Page> | undefined = pageAfter(session, serviceUrl, layer, 0);
  while (page !== undefined) {
    const { features, next }: Page = await page;
    page = next === undefined || features.length === 0 ? undefined : pageAfter(session, serviceUrl, layer, next);
    // A consumer that stops early must not leave the next page's failure unhandled.
    page?.catch(() => undefined);
    yield* features;
  }
}
