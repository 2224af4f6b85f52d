import type { LayerChanges } from '../arcgis-request/extract-changes.js';
import { buildStoredEvent, type AcceptedEvent } from '../events/build-event.js';
import type { StoredEvent } from '../events/envelope.js';
import { activityOf } from '../events/service-activity.js';

/** The change type of each list of `extractChanges` (its features', then its ids-only answer's), in the order events name them. */
const changeTypes = [
  ['adds', 'adds', 'FeaturesCreated'],
  ['updates', 'updates', 'FeaturesUpdated'],
  ['deleteIds', 'deletes', 'FeaturesDeleted'],
] as const;

/** The change types `extractChanges` found over every layer, as features or as ids only; none when the range holds no edit. */
export function changeTypesFound(edits: readonly LayerChanges[]): string[] {
  return changeTypes
    .filter(([features, ids]) => edits.some((layer) => layer.features[features].length > 0 || (layer.objectIds?.[ids].length ?? 0) > 0))
    .map(([, , type]) => type);
}

/** What a backfilled range is about. */
export interface BackfilledRange {
  hook: string;
  /** `Folder/Name` (or `Name`) of the feature service. */
  folderName: string;
  serviceName: string;
  /** The layer of an ArcGIS Online scope; undefined for ArcGIS Enterprise (every layer). */
  layerId: number | undefined;
  /** The `extractChanges` URL that returned the changes, with the range's `serverGens`. */
  changesUrl: string;
  /** When the gap was found (epoch ms): the events' time, so that a retried backfill makes the same bytes. */
  when: number;
  types: readonly string[];
  /** @defaultValue 'backfill' */
  source?: 'backfill' | 'poll';
}

/** `<org id>` of an ArcGIS Online services URL (`https://services.arcgis.com/<org id>/ArcGIS/rest/services/…`). */
const orgIdOf = (url: string): string | undefined => /^\/([^/]+)\/ArcGIS\/rest\/services\//i.exec(new URL(url).pathname)?.[1];

/**
 * The payload a delivery of these edits would have had: ArcGIS Enterprise's object or an ArcGIS Online array
 * item, `name` `geohook-backfill`, so that consumers read a backfilled range as they read a delivered one.
 */
function payloadOf(range: BackfilledRange): unknown {
  const { folderName, serviceName, layerId, changesUrl, when, types } = range;
  if (layerId === undefined) {
    return {
      serviceType: 'FeatureServer',
      changesUrl,
      name: 'geohook-backfill',
      folderName,
      serviceName,
      events: types.map((eventType) => ({ eventType, when })),
    };
  }
  const orgId = orgIdOf(changesUrl);
  return [
    {
      name: 'geohook-backfill',
      layerId,
      ...(orgId === undefined ? {} : { orgId }),
      serviceName,
      lastUpdatedTime: when,
      changesUrl,
      events: [...types],
    },
  ];
}

/**
 * The event of a backfilled range: the envelope of a delivery (id = SHA-256 of the payload's bytes,
 * the same for the same range, so a retried backfill is recognised as a repeat), `verified` false (no
 * signature was involved) and `source: "backfill"` (or `"poll"`).
 */
export function backfillEvent(range: BackfilledRange): AcceptedEvent {
  const payload = payloadOf(range);
  const raw = Buffer.from(JSON.stringify(payload), 'utf8');
  const event: StoredEvent = {
    // Its changesUrl is where geohook itself read the edits: a URL it trusts.
    ...buildStoredEvent({ raw, hook: range.hook, contentType: 'application/json', verified: false, classified: payload }, () => true),
    source: range.source ?? 'backfill',
  };
  // Its range was reserved when the gap was found: it is not checked against the watermarks again.
  return { event, ranges: [], activity: activityOf(event) };
}
