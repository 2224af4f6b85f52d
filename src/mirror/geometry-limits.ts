import { GeohookError } from '../errors.js';

/** The most vertices (positions of all rings, paths or points together) one geometry the mirror keeps may have. */
export const MAX_GEOMETRY_VERTICES = 1_000_000;
/** The most parts (rings of a polygon, paths of a polyline) one geometry the mirror keeps may have. */
export const MAX_GEOMETRY_PARTS = 100_000;
/**
 * The most steps (an edge or a bounding box compared with a point) grouping one polygon's rings may take. Real
 * polygons take a few per vertex; only contrived shapes (thousands of rings between the teeth of a comb) get here.
 */
export const MAX_RING_GROUPING_STEPS = 20_000_000;

/** The error of a geometry past a limit: the mirror refuses it rather than spend the time it would take. */
export function geometryLimitError(reason: string): GeohookError {
  return new GeohookError('GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT', `geometry refused: ${reason}`);
}

/** Counts the steps of grouping one polygon's rings, and refuses the polygon past its limit. */
export class RingGroupingBudget {
  steps = 0;

  /** @param limit - @defaultValue {@link MAX_RING_GROUPING_STEPS} */
  constructor(readonly limit: number = MAX_RING_GROUPING_STEPS) {}

  spend(steps: number): void {
    this.steps += steps;
    if (this.steps > this.limit) {
      throw geometryLimitError(`grouping its rings takes more than ${this.limit.toLocaleString('en-US')} steps`);
    }
  }
}

/** Throws when a geometry's parts (each a list of positions), or its positions in all, are past the limits. */
export function checkGeometrySize(parts: readonly unknown[], what: 'rings' | 'paths'): void {
  if (parts.length > MAX_GEOMETRY_PARTS) {
    throw geometryLimitError(`${parts.length.toLocaleString('en-US')} ${what}, more than ${MAX_GEOMETRY_PARTS.toLocaleString('en-US')}`);
  }
  let vertices = 0;
  for (const part of parts) vertices += Array.isArray(part) ? part.length : 0;
  checkVertexCount(vertices);
}

/** Throws when a geometry has more positions than {@link MAX_GEOMETRY_VERTICES}. */
export function checkVertexCount(vertices: number): void {
  if (vertices > MAX_GEOMETRY_VERTICES) {
    throw geometryLimitError(`${vertices.toLocaleString('en-US')} vertices, more than ${MAX_GEOMETRY_VERTICES.toLocaleString('en-US')}`);
  }
}
