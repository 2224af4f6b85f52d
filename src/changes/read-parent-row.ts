import { readServiceLayers } from '../arcgis-request/layer-info.js';
import { readRowsById } from '../arcgis-request/read-current-rows.js';
import { rowOf } from './build-change-events.js';
import { changeServiceOf } from './change-service.js';
import type { ParentRef } from './parent-ref.js';
import type { ResolverContext } from './resolver-context.js';
import type { ParentPart } from './submission-event.js';

/** Reads the row of a parent kept as a reference; undefined when it is no longer there. */
export type ParentReader = (ref: ParentRef) => Promise<ParentPart | undefined>;

/**
 * The parents of submissions whose other parts came after them (another range, or a Survey123 webhook after the
 * range): their row read from the service with `query` when the submission closes, flagged `asOf: 'current'`.
 */
export function parentReaderOf(context: ResolverContext): ParentReader {
  return async (ref) => {
    const session = context.sessionOf();
    const serviceUrl = new URL(context.urlOf(ref.serviceName));
    const { layers } = await readServiceLayers(session, serviceUrl);
    const layer = layers.find(({ id }) => id === ref.layerId);
    if (layer === undefined) return undefined;
    const rows = await readRowsById(session, serviceUrl.href.replace(/\/+$/, ''), layer, [ref.objectId]);
    const feature = rows.get(ref.objectId);
    if (feature === undefined) return undefined;
    return {
      layer: { id: layer.id, name: layer.name },
      key: { objectId: ref.objectId, ...(ref.globalId === undefined ? {} : { globalId: ref.globalId }) },
      after: rowOf(layer, feature, 'current'),
      hook: ref.hook,
      serviceName: ref.serviceName,
      service: changeServiceOf(ref.serviceName, serviceUrl, context.orgId),
      ts: ref.ts,
    };
  };
}
