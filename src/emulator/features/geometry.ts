/** A request's spatial references and envelopes, read as the real server reads them, and projection with its 400s. */
import { projectGeometry, readWkid, type Envelope, type Geometry } from '../../arcgis/geometry.js';
import { invalidParameter } from '../admin-error.js';

export { intersectsEnvelope } from '../../arcgis/geometry.js';

const SUPPORTED = 'must be 4326, 3857 or 102100';

/**
 * The wkid of a spatial reference given as a number, a numeric string, or `{"wkid":…}` / `{"latestWkid":…}` (as an
 * object or its JSON), with Web Mercator's other names (102100, 900913) read as 3857.
 *
 * @param parameter - the request parameter it came from, named by the 400 when it is none of these
 */
export function normalizeWkid(sr: unknown, parameter = 'outSR'): number {
  let value = sr;
  if (typeof value === 'string' && value.trim().startsWith('{')) {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      throw invalidParameter(parameter, 'must be a wkid or a spatial reference as JSON');
    }
  }
  const wkid =
    typeof value === 'object' && value !== null
      ? (readWkid((value as { latestWkid?: unknown }).latestWkid) ?? readWkid((value as { wkid?: unknown }).wkid))
      : readWkid(value);
  if (wkid === undefined) throw invalidParameter(parameter, 'must be a wkid or a spatial reference as JSON');
  return wkid;
}

/** `wkid` as 4326 or 3857 (Web Mercator by any of its names); a 400 naming `parameter` for any other. */
function supportedWkid(wkid: number, parameter: string): 4326 | 3857 {
  const normal = readWkid(wkid);
  if (normal !== 4326 && normal !== 3857) throw invalidParameter(parameter, `${SUPPORTED}, got ${wkid}`);
  return normal;
}

/**
 * `geometry` projected from `fromWkid` to `toWkid`: between 4326 (degrees) and Web Mercator (3857, also 102100 and
 * 900913) by the spherical formulas, z and m kept (any other property dropped); the geometry itself when both name
 * the same spatial reference.
 *
 * @param parameter - the request parameter a 400 names when a wkid is neither (`inSR`, `outSR`)
 */
export function project(geometry: Geometry, fromWkid: number, toWkid: number, parameter = 'outSR'): Geometry {
  return projectGeometry(geometry, supportedWkid(fromWkid, parameter), supportedWkid(toWkid, parameter));
}

const ENVELOPE_FORMS = 'must be xmin,ymin,xmax,ymax or an envelope as JSON';
const DECIMAL = /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/**
 * The envelope of a `geometry` parameter, given as `xmin,ymin,xmax,ymax` or as JSON
 * `{"xmin":…,"ymin":…,"xmax":…,"ymax":…,"spatialReference":{…}}` (text or parsed), with the wkid of its spatial
 * reference when it has one (see {@link normalizeWkid}). Minima and maxima given the wrong way round are swapped.
 *
 * @param parameter - the request parameter it came from, named by the 400 for anything else
 */
export function parseEnvelope(value: unknown, parameter: string): { envelope: Envelope; wkid?: number } {
  let source = value;
  if (typeof source === 'string' && source.trim().startsWith('{')) {
    try {
      source = JSON.parse(source) as unknown;
    } catch {
      throw invalidParameter(parameter, ENVELOPE_FORMS);
    }
  }
  const record = (typeof source === 'object' && source !== null ? source : {}) as Record<string, unknown>;
  const numbers =
    typeof source === 'string'
      ? source.split(',').map((part) => (DECIMAL.test(part) ? Number(part) : NaN))
      : [record.xmin, record.ymin, record.xmax, record.ymax];
  if (numbers.length !== 4 || !numbers.every((number) => typeof number === 'number' && Number.isFinite(number))) {
    throw invalidParameter(parameter, ENVELOPE_FORMS);
  }
  const [x1, y1, x2, y2] = numbers as [number, number, number, number];
  const envelope = { xmin: Math.min(x1, x2), ymin: Math.min(y1, y2), xmax: Math.max(x1, x2), ymax: Math.max(y1, y2) };
  const sr = record.spatialReference;
  return sr === undefined || sr === null ? { envelope } : { envelope, wkid: normalizeWkid(sr, parameter) };
}
