/**
 * The geometry of the query operation: projection between 4326 and Web Mercator, the envelope of a request, and
 * whether a geometry meets it. Written here rather than taken from `@turf/boolean-intersects` (with
 * `@terraformer/arcgis` for Esri JSON): against a rectangle the exact test is short and runs on Esri JSON as stored,
 * with no conversion per row, while turf 7.4 misses segments lying along an edge and segments after a repeated vertex.
 */
import { invalidParameter } from '../admin-error.js';
import type { Envelope, Geometry } from './types.js';

/** The radius of the sphere of Web Mercator (WGS 84's semi-major axis), in metres. */
const RADIUS_M = 6_378_137;
/** The latitude at which Web Mercator's square world ends; latitudes past it are projected as it. */
const MAX_LATITUDE = 85.0511287798066;
const DEGREES = 180 / Math.PI;

/** The other names of Web Mercator, read as 3857. */
const WEB_MERCATOR_ALIASES = new Set([102100, 900913]);
const SUPPORTED = 'must be 4326, 3857 or 102100';

const readWkid = (value: unknown): number | undefined => {
  const wkid = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof wkid === 'number' && Number.isSafeInteger(wkid) && wkid > 0 ? (WEB_MERCATOR_ALIASES.has(wkid) ? 3857 : wkid) : undefined;
};

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

type Projector = (x: number, y: number) => [number, number];

/** Degrees of longitude and latitude to Web Mercator metres (spherical formulas). */
const toWebMercator: Projector = (lon, lat) => {
  const clamped = Math.max(-MAX_LATITUDE, Math.min(MAX_LATITUDE, lat));
  return [(lon / DEGREES) * RADIUS_M, RADIUS_M * Math.log(Math.tan(Math.PI / 4 + clamped / DEGREES / 2))];
};

/** Web Mercator metres to degrees of longitude and latitude. */
const toGeographic: Projector = (x, y) => [(x / RADIUS_M) * DEGREES, (2 * Math.atan(Math.exp(y / RADIUS_M)) - Math.PI / 2) * DEGREES];

/** A vertex `[x, y, z?, m?]` projected, its z and m kept. */
const projectVertex = (vertex: number[], projector: Projector): number[] => {
  const [x = NaN, y = NaN, ...rest] = vertex;
  return [...projector(x, y), ...rest];
};

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
  const [from, to] = [supportedWkid(fromWkid, parameter), supportedWkid(toWkid, parameter)];
  if (from === to) return geometry;
  const projector = to === 3857 ? toWebMercator : toGeographic;
  if ('x' in geometry) {
    const [x, y] = projector(geometry.x, geometry.y);
    return { x, y, ...(geometry.z === undefined ? {} : { z: geometry.z }), ...(geometry.m === undefined ? {} : { m: geometry.m }) };
  }
  const parts = (lines: number[][][]) => lines.map((line) => line.map((vertex) => projectVertex(vertex, projector)));
  return 'paths' in geometry ? { paths: parts(geometry.paths) } : { rings: parts(geometry.rings) };
}

/**
 * Whether the segment from (ax, ay) to (bx, by) meets the closed rectangle: their boxes overlap and the segment's
 * line does not leave all four corners strictly on one side (the separating-axis test; a point is a segment too).
 */
function segmentMeets(ax: number, ay: number, bx: number, by: number, { xmin, ymin, xmax, ymax }: Envelope): boolean {
  if (Math.max(ax, bx) < xmin || Math.min(ax, bx) > xmax || Math.max(ay, by) < ymin || Math.min(ay, by) > ymax) return false;
  const side = (x: number, y: number) => Math.sign((bx - ax) * (y - ay) - (by - ay) * (x - ax));
  const sides = side(xmin, ymin) + side(xmin, ymax) + side(xmax, ymin) + side(xmax, ymax);
  return sides !== 4 && sides !== -4;
}

/** Whether a path (or a ring, closing it) meets the rectangle; a single vertex is a point. */
function lineMeets(vertices: number[][], envelope: Envelope, closed: boolean): boolean {
  for (let i = closed || vertices.length === 1 ? 0 : 1; i < vertices.length; i++) {
    const a = vertices[i === 0 ? vertices.length - 1 : i - 1]!;
    const b = vertices[i]!;
    if (segmentMeets(a[0]!, a[1]!, b[0]!, b[1]!, envelope)) return true;
  }
  return false;
}

/**
 * Whether (x, y) is inside the rings by the even-odd rule (inside an outer ring and not inside one of its holes,
 * whatever their orientation). For a point on no ring: on a boundary the answer may be either.
 */
function insideRings(x: number, y: number, rings: number[][][]): boolean {
  let inside = false;
  for (const ring of rings) {
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const [xi, yi] = ring[i]! as [number, number];
      const [xj, yj] = ring[j]! as [number, number];
      if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
    }
  }
  return inside;
}

/**
 * Whether `geometry` meets the closed rectangle `envelope`, as PostGIS's `ST_Intersects` answers (not a test of
 * bounding boxes): a point inside or on its edge; a polyline one of whose segments touches it; a polygon whose
 * boundary touches it, or that holds it whole (inside a ring and not inside a hole, by the even-odd rule, so ring
 * orientation does not matter). A polygon inside the envelope has its boundary inside it too.
 */
export function intersectsEnvelope(geometry: Geometry, envelope: Envelope): boolean {
  if ('x' in geometry) return segmentMeets(geometry.x, geometry.y, geometry.x, geometry.y, envelope);
  if ('paths' in geometry) return geometry.paths.some((path) => lineMeets(path, envelope, false));
  return geometry.rings.some((ring) => lineMeets(ring, envelope, true)) || insideRings(envelope.xmin, envelope.ymin, geometry.rings);
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
