import { readChanges } from '../arcgis-request/extract-changes.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { changeTypesFound } from './backfill-event.js';

/** A gap: the server generations `(from, to]` of the feature service at `serviceUrl`. */
export interface Gap {
  serviceUrl: URL;
  from: string;
  to: string;
  /** The layer of an ArcGIS Online scope; undefined for ArcGIS Enterprise (every layer of the service). */
  layerId: number | undefined;
}

/** What a gap holds. */
export interface GapChanges {
  /** Its `extractChanges` URL as events name it (`serverGens` and `layers`): reading it gives the features. */
  changesUrl: URL;
  /** The change types found; none when the gap holds no edit. */
  types: string[];
}

type Resource = Record<string, unknown>;

/** The ids of a feature service's layers and tables (a related table's edits are change-tracked too), from its REST resource. */
const layerIdsOf = (resource: Resource): number[] =>
  [resource.layers, resource.tables]
    .flatMap((list) => (Array.isArray(list) ? (list as { id?: unknown }[]) : []))
    .map((layer) => layer.id)
    .filter((id): id is number => Number.isSafeInteger(id))
    .sort((a, b) => a - b);

/** Whether the service's `extractChanges` answers ids only (`extractChangesCapabilities.supportsReturnIdsOnly`). */
const answersIdsOnly = (resource: Resource): boolean =>
  (resource.extractChangesCapabilities as { supportsReturnIdsOnly?: unknown } | undefined)?.supportsReturnIdsOnly === true;

/**
 * The change types of a gap (docs/backfill.md#how-it-works), read in `session` with as few bytes as the service
 * allows: its REST resource gives the layers and whether `extractChanges` answers ids only (`returnIdsOnly=true`,
 * the features are left to consumers). The server is asked for an asynchronous job (`async=true`, polled until
 * it completes; a server that answers at once is read at once), so a large range is not bound by one request's
 * timeout. An ids-only answer listing no id is checked once in full, as some servers answer ids only with empty
 * lists where there are edits; a range truly empty answers little either way.
 */
export async function readGapChanges(session: ServiceSession, gap: Gap): Promise<GapChanges> {
  const resource = await session.read(gap.serviceUrl);
  const layers = gap.layerId === undefined ? layerIdsOf(resource) : [gap.layerId];
  const changesUrl = new URL(`${gap.serviceUrl.href}/extractChanges`);
  changesUrl.searchParams.set('serverGens', `[${gap.from},${gap.to}]`);
  changesUrl.searchParams.set('layers', `[${layers.join(',')}]`);
  const typesOf = async (idsOnly: boolean): Promise<string[]> => {
    const url = new URL(changesUrl);
    url.searchParams.set('async', 'true');
    if (idsOnly) url.searchParams.set('returnIdsOnly', 'true');
    return changeTypesFound((await readChanges(session, url)).edits);
  };
  const idsOnly = answersIdsOnly(resource);
  const types = await typesOf(idsOnly);
  return { changesUrl, types: idsOnly && types.length === 0 ? await typesOf(false) : types };
}
