/** The payloads a GIS server delivers: their shapes, and how deep they may nest. */

/** One entry of a payload's `events`: `{eventType, when}` (Enterprise) or the bare name (ArcGIS Online). */
export type PayloadEvent = { eventType: string; when?: number } | string;

/** An ArcGIS Enterprise geoprocessing delivery. Fields are as sent; none is guaranteed. */
export interface GpJobPayload {
  serviceType?: string;
  jobId?: string;
  /** The job's REST resource; `fetchJobResult` reads it. */
  statusURL?: string;
  /** Webhook name. */
  name?: string;
  taskName?: string;
  folderName?: string;
  serviceName?: string;
  events?: PayloadEvent[];
  [field: string]: unknown;
}

/** An ArcGIS Enterprise feature-service delivery, or one item of an ArcGIS Online delivery. */
export interface FeaturePayloadItem {
  serviceType?: string;
  /** `extractChanges` for the edits (percent-encoded in ArcGIS Online deliveries); `fetchChanges` reads it. */
  changesUrl?: string;
  name?: string;
  /** Webhook id (Enterprise). */
  id?: string;
  layerId?: number;
  orgId?: string;
  folderName?: string;
  serviceName?: string;
  lastUpdatedTime?: number;
  events?: PayloadEvent[];
  [field: string]: unknown;
}

/** Deepest nesting of arrays and objects a payload may have; the GIS server's go three or four deep. */
export const MAX_NESTING = 64;

/**
 * True when `value` nests arrays or objects deeper than `max`. The walk stops at `max + 1` levels, so a
 * hostile body cannot overflow the stack here (JSON.parse itself is iterative; JSON.stringify, used to
 * store the event, is not).
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (nestedDeeperThan(child, max - 1)) return true;
  return false;
}

/**
 * ArcGIS Online's test delivery (a hosted feature layer webhook's `status` operation, and the server's own
 * checks): items whose `events` are exactly `["NoContent"]`, with no `layerId` and no `changesUrl`. It
 * reports no edit.
 */
export function isTestPing(payload: unknown): boolean {
  const items = Array.isArray(payload) ? payload : [payload];
  return (
    items.length > 0 &&
    items.every((item) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
      const { events, layerId, changesUrl } = item as { events?: unknown; layerId?: unknown; changesUrl?: unknown };
      return Array.isArray(events) && events.length === 1 && events[0] === 'NoContent' && layerId === undefined && changesUrl === undefined;
    })
  );
}
