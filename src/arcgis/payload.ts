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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]); // [ {
const CLOSERS = new Set([0x5d, 0x7d]); // ] }

/** True when `json` holds at most `max` of `[` and `{`, wherever they are. */
function openingsAtMost(json: string | Uint8Array, max: number): boolean {
  const text = typeof json === 'string' ? json : Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  let count = 0;
  for (const opener of ['[', '{']) {
    for (let at = text.indexOf(opener); at !== -1; at = text.indexOf(opener, at + 1)) if (++count > max) return false;
  }
  return true;
}

/**
 * True when the JSON text `json` nests arrays or objects deeper than `max`, read in one pass over its characters
 * (brackets outside strings), before any parse: a hostile body costs a scan, not a parse. For valid JSON this is
 * the nesting of the parsed value; for text that is not JSON it is an upper bound of it.
 */
export function jsonNestingExceeds(json: string | Uint8Array, max: number): boolean {
  // No deeper than the brackets that open: counted by native searches, the usual body needs no scan.
  if (openingsAtMost(json, max)) return false;
  const length = json.length;
  const at = typeof json === 'string' ? (index: number) => json.charCodeAt(index) : (index: number) => json[index]!;
  let depth = 0;
  let inString = false;
  for (let index = 0; index < length; index += 1) {
    const code = at(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (OPENERS.has(code)) {
      depth += 1;
      if (depth > max) return true;
    } else if (CLOSERS.has(code)) depth -= 1;
  }
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
