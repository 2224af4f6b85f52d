import { RingGroupingBudget } from './geometry-limits.js';
import { RingIndex, type Coordinate } from './ring-index.js';

export type { Coordinate } from './ring-index.js';

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

/** The ring closed (its last position its first), or as it is. */
function closed(ring: Coordinate[]): Coordinate[] {
  const first = ring[0];
  const last = ring.at(-1);
  if (first === undefined || last === undefined) return ring;
  return first[0] === last[0] && first[1] === last[1] ? ring : [...ring, [...first]];
}

interface Exterior {
  ring: Coordinate[];
  area: number;
  holes: Coordinate[][];
}

/**
 * Whether `inner` lies within `outer`: its first vertex not on `outer`'s boundary is inside it (rings of a valid
 * polygon do not cross).
 */
function ringWithin(inner: readonly Coordinate[], outer: RingIndex, budget: RingGroupingBudget): boolean {
  for (const [x, y] of inner as [number, number][]) {
    const { where, edgesRead } = outer.locate(x, y);
    budget.spend(edgesRead + 1);
    if (where !== 0) return where === 1;
  }
  return true;
}

/**
 * The exteriors, smallest first, in a grid of cells over their bounding boxes: the exteriors whose box holds a
 * point are found among those of its cell, not among all.
 */
class ExteriorGrid {
  private readonly indexes: RingIndex[];
  private readonly cells: number[][] = [];
  private readonly side: number;
  private readonly minX: number;
  private readonly minY: number;
  private readonly cellWidth: number;
  private readonly cellHeight: number;

  constructor(
    private readonly exteriors: readonly Exterior[],
    budget: RingGroupingBudget,
  ) {
    this.indexes = exteriors.map(({ ring }) => new RingIndex(ring));
    const extent = (read: (index: RingIndex) => number, pick: (a: number, b: number) => number): number =>
      this.indexes.map(read).reduce(pick);
    this.minX = extent((index) => index.minX, Math.min);
    this.minY = extent((index) => index.minY, Math.min);
    const width = extent((index) => index.maxX, Math.max) - this.minX;
    const height = extent((index) => index.maxY, Math.max) - this.minY;
    this.side = Math.min(Math.ceil(Math.sqrt(exteriors.length)), 1024);
    [this.cellWidth, this.cellHeight] = [width / this.side, height / this.side];
    if (!(this.cellWidth > 0 && this.cellHeight > 0)) this.side = 1;
    this.indexes.forEach((index, position) => {
      const [x0, x1] = [this.column(index.minX), this.column(index.maxX)];
      const [y0, y1] = [this.row(index.minY), this.row(index.maxY)];
      budget.spend((x1 - x0 + 1) * (y1 - y0 + 1));
      for (let row = y0; row <= y1; row += 1) {
        for (let column = x0; column <= x1; column += 1) (this.cells[row * this.side + column] ??= []).push(position);
      }
    });
  }

  private column(x: number): number {
    return this.side === 1 ? 0 : Math.min(Math.floor((x - this.minX) / this.cellWidth), this.side - 1);
  }

  private row(y: number): number {
    return this.side === 1 ? 0 : Math.min(Math.floor((y - this.minY) / this.cellHeight), this.side - 1);
  }

  /** The smallest exterior `hole` lies within (see {@link ringWithin}), if any. */
  ownerOf(hole: readonly Coordinate[], budget: RingGroupingBudget): Exterior | undefined {
    // An exterior whose box does not hold the hole's first vertex finds it outside at once: it cannot own the hole.
    const [x, y] = hole[0] as [number, number];
    if (x < this.minX || y < this.minY) return undefined;
    const cell = this.cells[this.row(y) * this.side + this.column(x)] ?? [];
    for (const position of cell) {
      const index = this.indexes[position]!;
      budget.spend(1);
      if (index.boxHolds(x, y) && ringWithin(hole, index, budget)) return this.exteriors[position];
    }
    return undefined;
  }
}

/**
 * Esri polygon rings grouped into the polygons of a MultiPolygon, each `[exterior, ...holes]`, oriented the
 * OGC way (exteriors counter-clockwise, holes clockwise, as `ST_ForcePolygonCCW` and GeoJSON have them).
 *
 * Esri JSON draws exterior rings clockwise and holes counter-clockwise, in any order. Each hole goes to the
 * smallest exterior containing it; a counter-clockwise ring inside no exterior is taken as an exterior (a client
 * that drew it the other way round), as ArcGIS's own simplify does. Rings are closed when they are not, and rings
 * of fewer than four positions or no area are dropped. Self-intersections and crossing rings are not repaired.
 *
 * Near-linear: each ring is read once for its area and bounding box, a hole is compared only with the exteriors whose
 * box holds its first vertex, and a long exterior is read only where the vertex's y lies (see {@link RingIndex}).
 * Throws `GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT` once the steps `budget` counts pass its limit.
 */
export function organizeRings(rings: readonly Coordinate[][], budget = new RingGroupingBudget()): Coordinate[][][] {
  const exteriors: Exterior[] = [];
  const holes: Coordinate[][] = [];
  for (const raw of rings) {
    const ring = closed(raw);
    if (ring.length < 4) continue;
    const area = signedArea2(ring);
    if (area < 0) exteriors.push({ ring: ring.toReversed(), area: -area, holes: [] });
    else if (area > 0) holes.push(ring.toReversed());
  }
  const grid =
    holes.length === 0 || exteriors.length === 0
      ? undefined
      : new ExteriorGrid(
          [...exteriors].sort((a, b) => a.area - b.area),
          budget,
        );
  for (const hole of holes) {
    const owner = grid?.ownerOf(hole, budget);
    if (owner === undefined) exteriors.push({ ring: hole.toReversed(), area: 0, holes: [] });
    else owner.holes.push(hole);
  }
  return exteriors.map((exterior) => [exterior.ring, ...exterior.holes]);
}
