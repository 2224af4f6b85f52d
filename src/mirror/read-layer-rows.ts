import type { EsriFeature } from '../arcgis-request/extract-changes.js';
import { parseExactJson } from '../arcgis-request/parse-exact-json.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import type { LayerInfo } from '../changes/layer-info.js';

/**
 * Every row of a layer, read with `query` a page of `maxRecordCount` rows at a time, in object id order, each page
 * after the last object id read (`where <oid> > last`), not at an offset: a row deleted meanwhile shifts no other
 * row out of the pages. Rows edited meanwhile come as they are when their page is read. BigInteger values are
 * read exactly (decimal strings).
 */
export async function* readLayerRows(session: ServiceSession, serviceUrl: URL, layer: LayerInfo): AsyncGenerator<EsriFeature> {
  const url = new URL(`${serviceUrl.href.replace(/\/+$/, '')}/${layer.id}/query`);
  for (let last = 0; ;) {
    url.search = new URLSearchParams({
      where: `${layer.objectIdField} > ${last}`,
      outFields: '*',
      returnGeometry: 'true',
      orderByFields: `${layer.objectIdField} ASC`,
      resultRecordCount: String(layer.maxRecordCount),
    }).toString();
    const answer = await session.read(url, undefined, parseExactJson);
    const features = Array.isArray(answer.features) ? (answer.features as EsriFeature[]) : [];
    for (const feature of features) yield feature;
    const lastId = features.at(-1)?.attributes[layer.objectIdField];
    if (features.length === 0 || typeof lastId !== 'number' || lastId <= last) return;
    last = lastId;
  }
}
