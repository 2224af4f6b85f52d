/**
 * Geometry both sides need: Esri JSON geometries, projection between 4326 and Web Mercator, and whether a geometry
 * meets an envelope. Written here rather than taken from `@turf/boolean-intersects` (with `@terraformer/arcgis` for
 * Esri JSON): against a rectangle the exact test is short and runs on Esri JSON as stored, with no conversion per
 * row, while turf 7.4 misses segments lying along an edge and segments after a repeated vertex.
 */

/** Esri JSON geometries, without their spatial reference. */
export interface PointGeometry {
  x: number;
  y: number;
  z?: number;
  m?: number;
}
export interface PolylineGeometry {
  paths: number[][][];
}
export interface PolygonGeometry {
  rings: number[][][];
}
export type Geometry = PointGeometry | PolylineGeometry | PolygonGeometry;

/** An envelope, as `geometry` with `geometryType=esriGeometryEnvelope` gives it. */
export interface Envelope {
  xmin: number;
  ymin: number;
  xmax: number;
  ymax: number;
}

/** The radius of the sphere of Web Mercator (WGS 84's semi-major axis), in metres. */
const RADIUS_M = 6_378_137;
/** The latitude at which Web Mercator's square world ends; latitudes past it are projected as it. */
const MAX_LATITUDE = 85.0511287798066;
const DEGREES = 180 / Math.PI;

/** The other names of Web Mercator, read as 3857. */
const WEB_MERCATOR_ALIASES = new Set([102100, 900913]);
/** A wkid as a positive whole number (or its text), Web Mercator's other names (102100, 900913) read as 3857; undefined for anything else. */
export const readWkid = (value: unknown): number | undefined => {
  const wkid = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof wkid === 'number' && Number.isSafeInteger(wkid) && wkid > 0 ? (WEB_MERCATOR_ALIASES.has(wkid) ? 3857 : wkid) : undefined;
};

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

/**
 * `geometry` projected from `from` to `to` (4326 degrees or Web Mercator metres) by the spherical formulas, z and m
 * kept (any other property dropped); the geometry itself when both are the same.
 */
export function projectGeometry(geometry: Geometry, from: 4326 | 3857, to: 4326 | 3857): Geometry {
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
