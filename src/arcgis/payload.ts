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
