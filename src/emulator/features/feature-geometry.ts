import type { EditError } from './field-values.js';
import { normalizeWkid, project } from './geometry.js';
import type { Geometry, LayerDefinition } from './types.js';

const GEOMETRY_FAILED: EditError = { code: 1015, description: 'Geometry could not be set.' };

const isCoordinate = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isVertex = (value: unknown): value is number[] =>
  Array.isArray(value) && value.length >= 2 && value.length <= 4 && value.every(isCoordinate);

/** Lists of vertices (`paths` or `rings`), each with at least `min` vertices; undefined when anything is off. */
function parts(value: unknown, min: number): number[][][] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const valid = value.every((part) => Array.isArray(part) && part.length >= min && part.every(isVertex));
  return valid ? (value as number[][][]).map((part) => part.map((vertex) => [...vertex])) : undefined;
}

/** A ring closed as ArcGIS stores it: its last vertex repeats its first. */
function closed(ring: number[][]): number[][] {
  const [first, last] = [ring[0]!, ring.at(-1)!];
  return first[0] === last[0] && first[1] === last[1] ? ring : [...ring, [...first]];
}

/** The geometry an edit gives, checked against the layer's geometry type, without its spatial reference. */
function shaped(layer: LayerDefinition, input: Record<string, unknown>): Geometry | undefined {
  switch (layer.geometryType) {
    case 'esriGeometryPoint': {
      const { x, y, z, m } = input;
      if (!isCoordinate(x) || !isCoordinate(y)) return undefined;
      return { x, y, ...(isCoordinate(z) ? { z } : {}), ...(isCoordinate(m) ? { m } : {}) };
    }
    case 'esriGeometryPolyline': {
      const paths = parts(input.paths, 2);
      return paths === undefined ? undefined : { paths };
    }
    case 'esriGeometryPolygon': {
      const rings = parts(input.rings, 3);
      return rings === undefined ? undefined : { rings: rings.map(closed) };
    }
    default:
      return undefined;
  }
}

/**
 * The geometry an edit sets on a feature of `layer`, in the layer's spatial reference (projected from the one the
 * geometry names, 4326 or Web Mercator), `null` to clear it; a table's rows take none (any given is ignored). Error
 * 1015 when it does not fit the layer's geometry type or cannot be projected.
 */
export function featureGeometry(layer: LayerDefinition, input: unknown): { geometry: Geometry | null } | { error: EditError } {
  if (layer.type === 'Table' || input === null) return { geometry: null };
  if (typeof input !== 'object' || Array.isArray(input)) return { error: GEOMETRY_FAILED };
  const geometry = shaped(layer, input as Record<string, unknown>);
  if (geometry === undefined) return { error: GEOMETRY_FAILED };
  const given = (input as { spatialReference?: unknown }).spatialReference;
  if (given === undefined || layer.spatialReference === undefined) return { geometry };
  try {
    return { geometry: project(geometry, normalizeWkid(given), normalizeWkid(layer.spatialReference), 'geometry') };
  } catch {
    return { error: GEOMETRY_FAILED };
  }
}
