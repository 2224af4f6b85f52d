import { readWkid } from '../arcgis/geometry.js';
import { AdminApiError } from '../errors.js';
import { unexpected } from './check-response.js';
import type { ServiceSession } from './service-session.js';

/** What geohook needs of a layer (or table) to turn its rows into change events. */
export interface LayerInfo {
  id: number;
  name: string;
  objectIdField: string;
  globalIdField?: string;
  /** Field names with their ArcGIS type (BigInteger values are written as decimal strings), and the codes of a coded-value domain. */
  fields: { name: string; type: string; codes?: (string | number)[] }[];
  /** Editor tracking: who edited a row, and when. */
  editFieldsInfo?: { editorField?: string; editDateField?: string; creatorField?: string; creationDateField?: string };
  /** Layers this one is the origin of (parents come before children among creates). */
  relatedTableIds: number[];
  /** True when this layer is the destination of a relationship (a child). */
  isChild: boolean;
  /** Its relationships: the related layer, this layer's side, and this layer's key field (Survey123: `globalid` → `parentglobalid`). */
  relationships: { relatedTableId: number; role: 'origin' | 'destination'; keyField: string }[];
  /** The most rows one `query` answers. */
  maxRecordCount: number;
  /** Feature layers: their geometry type and the wkid their geometries are in (tables have neither). */
  geometryType?: string;
  wkid?: number;
  /** Feature layers whose geometries carry z values, m values. */
  hasZ?: boolean;
  hasM?: boolean;
  /** Layers and tables whose features may have attachments. */
  hasAttachments?: boolean;
}

/** A feature service's layers and tables, as its REST resources describe them. */
export interface ServiceLayers {
  layers: LayerInfo[];
  /** `extractChangesCapabilities.supportsFeatureReturn` (false on 10.6.1-era servers: ids only). */
  returnsRows: boolean;
  /** `extractChangesCapabilities`: whether `extractChanges` filters by `layerQueries` (a where) and by `geometry`. */
  supportsLayerQueries: boolean;
  supportsGeometry: boolean;
  /** `extractChangesCapabilities.supportsReturnAttachments`. */
  supportsReturnAttachments: boolean;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The codes of a coded-value domain, as a field's `codes`; nothing for another domain or none. */
function codesOf(domain: unknown): { codes?: (string | number)[] } {
  if (!isObject(domain) || domain.type !== 'codedValue' || !Array.isArray(domain.codedValues)) return {};
  const codes = domain.codedValues
    .filter(isObject)
    .map((entry) => entry.code)
    .filter((code): code is string | number => typeof code === 'string' || typeof code === 'number');
  return { codes };
}

function layerInfoOf(id: number, body: Json, url: string): LayerInfo {
  const objectIdField =
    text(body.objectIdField) ??
    (Array.isArray(body.fields) ? (body.fields as Json[]).find((f) => f.type === 'esriFieldTypeOID')?.name : undefined);
  if (typeof objectIdField !== 'string') throw unexpected(url, "'objectIdField'", body);
  const relationships = Array.isArray(body.relationships) ? body.relationships.filter(isObject) : [];
  const info: LayerInfo = {
    id,
    name: text(body.name) ?? String(id),
    objectIdField,
    fields: (Array.isArray(body.fields) ? body.fields.filter(isObject) : [])
      .filter((field) => typeof field.name === 'string')
      .map((field) => ({ name: field.name as string, type: String(field.type), ...codesOf(field.domain) })),
    relatedTableIds: relationships
      .filter((r) => r.role === 'esriRelRoleOrigin' && typeof r.relatedTableId === 'number')
      .map((r) => r.relatedTableId as number),
    isChild: relationships.some((r) => r.role === 'esriRelRoleDestination'),
    ...(body.hasAttachments === true ? { hasAttachments: true } : {}),
    relationships: relationships.flatMap((r) =>
      typeof r.relatedTableId === 'number' && typeof r.keyField === 'string' && /^esriRelRole(Origin|Destination)$/.test(String(r.role))
        ? [
            {
              relatedTableId: r.relatedTableId,
              role: r.role === 'esriRelRoleOrigin' ? ('origin' as const) : ('destination' as const),
              keyField: r.keyField,
            },
          ]
        : [],
    ),
    maxRecordCount:
      Number.isSafeInteger(body.maxRecordCount) && (body.maxRecordCount as number) > 0 ? (body.maxRecordCount as number) : 1000,
  };
  const geometryType = text(body.geometryType);
  const reference = [
    body.spatialReference,
    body.sourceSpatialReference,
    isObject(body.extent) ? body.extent.spatialReference : undefined,
  ].find(isObject);
  const wkid = reference === undefined ? undefined : (readWkid(reference.latestWkid) ?? readWkid(reference.wkid));
  if (geometryType !== undefined) info.geometryType = geometryType;
  if (geometryType !== undefined && wkid !== undefined) info.wkid = wkid;
  if (geometryType !== undefined && body.hasZ === true) info.hasZ = true;
  if (geometryType !== undefined && body.hasM === true) info.hasM = true;
  const globalIdField = text(body.globalIdField);
  if (globalIdField !== undefined) info.globalIdField = globalIdField;
  if (isObject(body.editFieldsInfo)) {
    const tracking = body.editFieldsInfo;
    info.editFieldsInfo = Object.fromEntries(
      ['editorField', 'editDateField', 'creatorField', 'creationDateField'].flatMap((name) =>
        text(tracking[name]) === undefined ? [] : [[name, tracking[name]]],
      ),
    );
  }
  return info;
}

/** The service's layer and table ids, as its resource lists them. */
function idsOf(service: Json): number[] {
  return [service.layers, service.tables]
    .flatMap((list) => (Array.isArray(list) ? list.filter(isObject) : []))
    .map((entry) => entry.id)
    .filter((id): id is number => Number.isSafeInteger(id))
    .sort((a, b) => a - b);
}

/**
 * Every layer's and table's definition: from the service's `layers` resource (one request), or, from a server
 * that does not have it, one request each.
 */
async function readDefinitions(session: ServiceSession, serviceUrl: URL, ids: readonly number[]): Promise<LayerInfo[]> {
  const base = serviceUrl.href.replace(/\/+$/, '');
  try {
    const url = `${base}/layers`;
    const all = await session.read(new URL(url));
    const byId = new Map(
      [all.layers, all.tables].flatMap((list) => (Array.isArray(list) ? list.filter(isObject) : [])).map((body) => [body.id, body]),
    );
    if (ids.every((id) => byId.has(id))) return ids.map((id) => layerInfoOf(id, byId.get(id)!, url));
  } catch (err) {
    if (!(err instanceof AdminApiError) || (err.serverCode !== 400 && err.serverCode !== 404)) throw err;
  }
  return Promise.all(
    ids.map(async (id) => {
      const url = new URL(`${base}/${id}`);
      return layerInfoOf(id, await session.read(url), url.href);
    }),
  );
}

/** Reads a feature service's resource and its layers' and tables' definitions (two requests). */
export async function readServiceLayers(session: ServiceSession, serviceUrl: URL): Promise<ServiceLayers> {
  const service = await session.read(serviceUrl);
  const layers = await readDefinitions(session, serviceUrl, idsOf(service));
  const capabilities = isObject(service.extractChangesCapabilities) ? service.extractChangesCapabilities : {};
  return {
    layers,
    returnsRows: capabilities.supportsFeatureReturn !== false,
    supportsLayerQueries: capabilities.supportsLayerQueries === true,
    supportsGeometry: capabilities.supportsGeometry === true,
    supportsReturnAttachments: capabilities.supportsReturnAttachments === true,
  };
}
