/** A position: x, y, then z and/or m when the geometry has them. */
export type Coordinate = number[];

/** Twice the signed area of a closed ring (shoelace, in x and y): positive when counter-clockwise. */
function signedArea2(ring: readonly Coordinate[]): number {
  let sum = 0;
  for (let index = 0; index < ring.length - 1; index += 1) {
    const [x1, y1] = ring[index] as [number, number];
    const [x2, y2] = ring[index + 1] as [number, number];
    sum += x1 * y2 - x2 * y1;
  }
  return sum;
}

/** Where a point lies against a closed ring: inside 1, outside -1, on its boundary 0 (ray casting). */
function pointInRing(x: number, y: number, ring: readonly Coordinate[]): 1 | 0 | -1 {
  let inside = false;
  for (let index = 0; index < ring.length - 1; index += 1) {
    const [x1, y1] = ring[index] as [number, number];
    const [x2, y2] = ring[index + 1] as [number, number];
    const cross = (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1);
    if (cross === 0 && x >= Math.min(x1, x2) && x <= Math.max(x1, x2) && y >= Math.min(y1, y2) && y <= Math.max(y1, y2)) return 0;
    if (y1 > y !== y2 > y && x < ((x2 - x1) * (y - y1)) / (y2 - y1) + x1) inside = !inside;
  }
  return inside ? 1 : -1;
}

/** Whether `inner` lies within `outer`: its first vertex not on `outer`'s boundary is inside it (rings of a valid polygon do not cross). */
function ringWithin(inner: readonly Coordinate[], outer: readonly Coordinate[]): boolean {
  for (const [x, y] of inner as [number, number][]) {
    const where = pointInRing(x, y, outer);
    if (where !== 0) return where === 1;
  }
  return true;
}

/** The ring closed (its last position its first), or as it is. */
function closed(ring: Coordinate[]): Coordinate[] {
  const first = ring[0];
  const last = ring.at(-1);
  if (first === undefined || last === undefined) return ring;
  return first[0] === last[0] && first[1] === last[1] ? ring : [...ring, [...first]];
}

/**
 * Esri polygon rings grouped into the polygons of a MultiPolygon, each `[exterior, ...holes]`, oriented the
 * OGC way (exteriors counter-clockwise, holes clockwise, as `ST_ForcePolygonCCW` and GeoJSON have them).
 *
 * Esri JSON draws exterior rings clockwise and holes counter-clockwise, in any order. Each hole goes to the
 * smallest exterior containing it; a counter-clockwise ring inside no exterior is taken as an exterior (a client
 * that drew it the other way round), as ArcGIS's own simplify does. Rings are closed when they are not, and rings
 * of fewer than four positions or no area are dropped. Self-intersections and crossing rings are not repaired.
 */
export function organizeRings(rings: readonly Coordinate[][]): Coordinate[][][] {
  const exteriors: { ring: Coordinate[]; area: number; holes: Coordinate[][] }[] = [];
  const holes: Coordinate[][] = [];
  for (const raw of rings) {
    const ring = closed(raw);
    if (ring.length < 4) continue;
    const area = signedArea2(ring);
    if (area < 0) exteriors.push({ ring: ring.toReversed(), area: -area, holes: [] });
    else if (area > 0) holes.push(ring.toReversed());
  }
  const bySize = [...exteriors].sort((a, b) => a.area - b.area);
  for (const hole of holes) {
    const owner = bySize.find((exterior) => ringWithin(hole, exterior.ring));
    if (owner === undefined) exteriors.push({ ring: hole.toReversed(), area: 0, holes: [] });
    else owner.holes.push(hole);
  }
  return exteriors.map((exterior) => [exterior.ring, ...exterior.holes]);
}
