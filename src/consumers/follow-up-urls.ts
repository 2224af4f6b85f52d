import { httpUrl } from '../arcgis-request/extract-changes.js';
import { GeohookError } from '../errors.js';
import type { EventFamily, GeohookEvent } from '../events/envelope.js';

/** A `GEOHOOK_ERR_FOLLOW_UP` error. */
export const followUpError = (message: string, cause?: unknown): GeohookError =>
  new GeohookError('GEOHOOK_ERR_FOLLOW_UP', message, cause === undefined ? undefined : { cause });

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The payload items of an event of `family`: the object, or each element of an ArcGIS Online array. */
function itemsOf(event: GeohookEvent, family: EventFamily, operation: string): unknown[] {
  if (event.family !== family) throw followUpError(`${operation} needs a ${family} event; event ${event.id} is ${event.family}`);
  const items = Array.isArray(event.payload) ? event.payload : [event.payload];
  if (items.length === 0) throw followUpError(`event ${event.id}: the payload is an empty array`);
  return items;
}

/** The `changesUrl` of each item of a feature event, in payload order (Enterprise: one object; ArcGIS Online: an array). */
export function changesUrlsOf(event: GeohookEvent): URL[] {
  const items = itemsOf(event, 'feature', 'fetchChanges');
  return items.map((item, index) => {
    const where = Array.isArray(event.payload) ? `payload[${index}].changesUrl` : 'payload.changesUrl';
    return httpUrl(isObject(item) ? item.changesUrl : undefined, `event ${event.id}: ${where}`);
  });
}

/** The `statusURL` of a GP event's job (the payload object, or the single element of an array). */
export function statusUrlOf(event: GeohookEvent): URL {
  const items = itemsOf(event, 'gp', 'fetchJobResult');
  if (items.length > 1) throw followUpError(`event ${event.id}: the payload holds ${items.length} jobs; expected one`);
  const [item] = items;
  return httpUrl(isObject(item) ? item.statusURL : undefined, `event ${event.id}: payload.statusURL`);
}
