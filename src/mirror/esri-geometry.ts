import type { MirrorSpatialReference } from './column-types.js';
import { checkGeometrySize, checkVertexCount } from './geometry-limits.js';
import { organizeRings, type Coordinate } from './polygon-rings.js';

/** The PostGIS geometry type of a mirrored layer's `shape` column. */
export type PostgisGeometryType = 'Point' | 'MultiPoint' | 'MultiLineString' | 'MultiPolygon';

const POSTGIS_TYPES: Readonly<Record<string, PostgisGeometryType>> = {
  esriGeometryPoint: 'Point',
  esriGeometryMultipoint: 'MultiPoint',
  esriGeometryPolyline: 'MultiLineString',
  esriGeometryPolygon: 'MultiPolygon',
};

/**
 * The PostGIS type of an ArcGIS geometry type: polylines and polygons become multi-geometries, since an ArcGIS
 * polyline or polygon may have several parts. `undefined` for a type the mirror does not keep (envelopes).
 */
export function postgisTypeOf(esriGeometryType: string): PostgisGeometryType | undefined {
  return Object.hasOwn(POSTGIS_TYPES, esriGeometryType) ? POSTGIS_TYPES[esriGeometryType] : undefined;
}

/** Esri's own codes of Web Mercator, which PostGIS knows as EPSG:3857. */
const WEB_MERCATOR_ALIASES = new Set([102100, 102113, 900913, 3785]);

/** The SRID of a spatial reference: its `latestWkid`, else its `wkid`, Web Mercator's aliases as 3857; 0 when unknown. */
export function sridOf(spatialReference: MirrorSpatialReference | undefined): number {
  const wkid = spatialReference?.latestWkid ?? spatialReference?.wkid;
  if (wkid === undefined || !Number.isSafeInteger(wkid) || wkid <= 0) return 0;
  return WEB_MERCATOR_ALIASES.has(wkid) ? 3857 : wkid;
}

/** What a geometry is encoded as: the column's type, SRID and dimensions. */
export interface GeometryTarget {
  type: PostgisGeometryType;
  srid: number;
  /** The column has z: a coordinate without one gets 0. @defaultValue false */
  hasZ?: boolean;
  /** The column has m: a coordinate without one gets NaN (ArcGIS's "no measure"). @defaultValue false */
  hasM?: boolean;
}

const WKB_TYPE_CODES: Readonly<Record<PostgisGeometryType | 'LineString' | 'Polygon', number>> = {
  Point: 1,
  LineString: 2,
  Polygon: 3,
  MultiPoint: 4,
  MultiLineString: 5,
  MultiPolygon: 6,
};
const Z_FLAG = 0x80000000;
const M_FLAG = 0x40000000;
const SRID_FLAG = 0x20000000;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Little-endian EWKB, written into a buffer that grows as needed. */
class WkbWriter {
  private buffer = Buffer.allocUnsafe(256);
  private offset = 0;

  constructor(private readonly flags: number) {}

  private reserve(bytes: number): void {
    if (this.offset + bytes <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.offset + bytes));
    this.buffer.copy(bigger, 0, 0, this.offset);
    this.buffer = bigger;
  }

  /** A geometry's header: byte order, type with the dimension flags, and the SRID on the outermost one. */
  header(type: keyof typeof WKB_TYPE_CODES, srid?: number): void {
    this.reserve(9);
    this.offset = this.buffer.writeUInt8(1, this.offset);
    const code = (WKB_TYPE_CODES[type] | this.flags | (srid === undefined ? 0 : SRID_FLAG)) >>> 0;
    this.offset = this.buffer.writeUInt32LE(code, this.offset);
    if (srid !== undefined) this.offset = this.buffer.writeInt32LE(srid, this.offset);
  }

  count(value: number): void {
    this.reserve(4);
    this.offset = this.buffer.writeUInt32LE(value, this.offset);
  }

  coordinates(points: readonly Coordinate[]): void {
    this.reserve(points.length * (points[0]?.length ?? 0) * 8);
    for (const point of points) for (const value of point) this.offset = this.buffer.writeDoubleLE(value, this.offset);
  }

  hex(): string {
    return this.buffer.toString('hex', 0, this.offset);
  }
}

const finite = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** A coordinate in the target's dimensions: z 0 and m NaN where the source has none. */
function coordinate(target: GeometryTarget, x: unknown, y: unknown, z: unknown, m: unknown): Coordinate {
  if (!finite(x) || !finite(y)) throw new TypeError(`not an Esri coordinate: x ${String(x)}, y ${String(y)}`);
  const point: Coordinate = [x, y];
  if (target.hasZ === true) point.push(finite(z) ? z : 0);
  if (target.hasM === true) point.push(finite(m) ? m : Number.NaN);
  return point;
}

/**
 * Reads a coordinate array of an Esri JSON geometry (`[x, y]`, then z when the geometry has z, then m when it
 * has m; without `hasZ`/`hasM` on the geometry, the target's dimensions say) into the target's dimensions.
 */
function coordinateReader(geometry: Json, target: GeometryTarget): (raw: unknown) => Coordinate {
  const sourceZ = geometry.hasZ === true || (geometry.hasZ === undefined && target.hasZ === true);
  const sourceM = geometry.hasM === true || (geometry.hasM === undefined && target.hasM === true);
  return (raw) => {
    if (!Array.isArray(raw)) throw new TypeError(`not an Esri coordinate: ${JSON.stringify(raw)}`);
    return coordinate(target, raw[0], raw[1], sourceZ ? raw[2] : undefined, sourceM ? raw[sourceZ ? 3 : 2] : undefined);
  };
}

const listOf = (geometry: Json, key: string): unknown[] => {
  const list = geometry[key];
  if (!Array.isArray(list)) throw new TypeError(`an Esri geometry for this column needs '${key}'`);
  return list;
};

/** A polyline's paths or a polygon's rings, checked against the limits before any is read. */
const partsOf = (geometry: Json, key: 'paths' | 'rings'): unknown[] => {
  const parts = listOf(geometry, key);
  checkGeometrySize(parts, key);
  return parts;
};

/**
 * An Esri JSON geometry as hex EWKB (little-endian, with the target's SRID and dimensions), which PostGIS reads
 * as a `geometry` value in `COPY` and as a query parameter. Points stay points; a multipoint's `points`,
 * a polyline's `paths` and a polygon's `rings` become MultiPoint, MultiLineString and MultiPolygon; rings are
 * grouped into polygons with their holes and oriented the OGC way (see {@link organizeRings}). `null` for no
 * geometry or an empty point; throws TypeError for a geometry that is not of the target's type, and
 * `GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT` for one past the limits of `geometry-limits.ts` (vertices, parts, the steps
 * of grouping a polygon's rings).
 */
export function toEwkbHex(geometry: unknown, target: GeometryTarget): string | null {
  if (geometry === null || geometry === undefined) return null;
  if (!isObject(geometry)) throw new TypeError('an Esri geometry is an object');
  const flags = (target.hasZ === true ? Z_FLAG : 0) | (target.hasM === true ? M_FLAG : 0);
  const writer = new WkbWriter(flags);
  const read = coordinateReader(geometry, target);
  switch (target.type) {
    case 'Point': {
      if (!('x' in geometry)) throw new TypeError("an Esri geometry for a Point column needs 'x'");
      if (geometry.x === null || geometry.x === 'NaN') return null;
      writer.header('Point', target.srid);
      writer.coordinates([coordinate(target, geometry.x, geometry.y, geometry.z, geometry.m)]);
      break;
    }
    case 'MultiPoint': {
      const list = listOf(geometry, 'points');
      checkVertexCount(list.length);
      const points = list.map(read);
      writer.header('MultiPoint', target.srid);
      writer.count(points.length);
      for (const point of points) {
        writer.header('Point');
        writer.coordinates([point]);
      }
      break;
    }
    case 'MultiLineString': {
      const paths = partsOf(geometry, 'paths').map((path) => (Array.isArray(path) ? path.map(read) : []));
      writer.header('MultiLineString', target.srid);
      writer.count(paths.length);
      for (const path of paths) {
        writer.header('LineString');
        writer.count(path.length);
        writer.coordinates(path);
      }
      break;
    }
    case 'MultiPolygon': {
      const polygons = organizeRings(partsOf(geometry, 'rings').map((ring) => (Array.isArray(ring) ? ring.map(read) : [])));
      writer.header('MultiPolygon', target.srid);
      writer.count(polygons.length);
      for (const rings of polygons) {
        writer.header('Polygon');
        writer.count(rings.length);
        for (const ring of rings) {
          writer.count(ring.length);
          writer.coordinates(ring);
        }
      }
      break;
    }
  }
  return writer.hex();
}
