import type { ChangeFile } from '../arcgis-request/change-file.js';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import { parseExactJson } from '../arcgis-request/parse-exact-json.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { changedParents, normalizeGuid, type RangeAttachments } from './attachment-changes.js';
import { isFeature, OP_OF_LIST, type ListSegment } from './range-segments.js';

/**
 * The features whose attachments changed in the range and nothing else (the rows of no list): an update each, its
 * row read now with `query` (by GlobalID), after the range's deletes. A feature no longer there has none.
 */
export async function attachmentOnlySegments(
  session: ServiceSession,
  serviceUrl: URL,
  file: ChangeFile,
  scoped: readonly LayerInfo[],
  attachments: RangeAttachments,
): Promise<ListSegment[]> {
  const segments: ListSegment[] = [];
  for (const layer of scoped) {
    const field = layer.globalIdField;
    const wanted = changedParents(attachments)
      .filter(({ layerId }) => layerId === layer.id)
      .map(({ globalId }) => globalId);
    if (field === undefined || wanted.length === 0) continue;
    const inLists = new Set<string>();
    for (const [index, list] of file.lists.entries()) {
      if (list.layerId !== layer.id || OP_OF_LIST[list.kind] === undefined || list.length === 0) continue;
      for (const element of await file.read(index, 0, list.length)) {
        const id = isFeature(element) ? element.attributes[field] : element;
        const guid = normalizeGuid(id);
        if (guid !== undefined) inLists.add(guid);
      }
    }
    const alone = wanted.filter((globalId) => !inLists.has(globalId));
    if (alone.length === 0) continue;
    const url = new URL(`${serviceUrl.href.replace(/\/+$/, '')}/${layer.id}/query`);
    url.search = new URLSearchParams({
      where: `${field} IN (${alone.map((globalId) => `'${globalId}'`).join(',')})`,
      outFields: '*',
      returnGeometry: 'true',
      f: 'json',
    }).toString();
    const answer = await session.read(url, undefined, parseExactJson);
    const rows = Array.isArray(answer.features) ? (answer.features as unknown[]) : [];
    if (rows.length > 0) segments.push({ layer, length: rows.length, op: 'u', list: -1, rows });
  }
  return segments;
}
