import type { LayerInfo } from '../arcgis-request/layer-info.js';
import { tableNameOf, type MirrorLayer } from './column-types.js';

/** What the mirror needs of a layer (its table's columns, key and geometry), from what the change resolver reads of it. */
export function mirrorLayerOf(info: LayerInfo): MirrorLayer {
  return {
    name: info.name,
    objectIdField: info.objectIdField,
    ...(info.globalIdField === undefined ? {} : { globalIdField: info.globalIdField }),
    fields: info.fields,
    ...(info.geometryType === undefined ? {} : { geometryType: info.geometryType }),
    ...(info.wkid === undefined ? {} : { spatialReference: { wkid: info.wkid } }),
    ...(info.hasZ === true ? { hasZ: true } : {}),
    ...(info.hasM === true ? { hasM: true } : {}),
  };
}

/** The table of a service's layer: `parcels_parcels` for layer "Parcels" of `Hosted/Parcels.FeatureServer`. */
export const layerTableOf = (service: string, layer: Pick<LayerInfo, 'name'>): string =>
  tableNameOf(service.replace(/\.FeatureServer$/, ''), layer.name);
