import fc from 'fast-check';
import t from 'tap';
import { RingGroupingBudget } from '../../src/mirror/geometry-limits.js';
import { organizeRings, type Coordinate } from '../../src/mirror/polygon-rings.js';

/** A regular polygon of `vertices` around (cx, cy), closed: clockwise (an Esri exterior) or counter-clockwise (a hole). */
function circle(cx: number, cy: number, radius: number, vertices: number, clockwise: boolean): Coordinate[] {
  const ring = Array.from({ length: vertices }, (_, index) => {
    const angle = ((clockwise ? -index : index) * 2 * Math.PI) / vertices;
    return [cx + radius * Math.cos(angle), cy + radius * Math.sin(angle)];
  });
  return [...ring, [...ring[0]!]];
}

/** A counter-clockwise square: a hole, or an exterior drawn the other way round. */
const square = (x: number, y: number, size = 1): Coordinate[] => [
  [x, y],
  [x + size, y],
  [x + size, y + size],
  [x, y + size],
  [x, y],
];

/**
 * The shape of security review 2, N2: a clockwise exterior of 40,000 vertices and 7,000 small counter-clockwise rings
 * outside it, half in the corners of its bounding box, half beyond it. Grouping it took seconds.
 */
function reviewShape(): Coordinate[][] {
  const rings = [circle(0, 0, 1000, 40_000, true)];
  for (let index = 0; index < 3500; index += 1) {
    const offset = (index % 70) * 2;
    const row = Math.floor(index / 70) * 2;
    rings.push(square(-1000 + offset * 0.5, -1000 + row * 0.5, 0.5)); // a corner of the box, outside the circle
    rings.push(square(2000 + offset, row)); // beyond the box
  }
  return rings;
}

t.test('issue 51 (review 2, N2): the review’s shape is grouped with a few steps per ring, not one per hole and vertex', async (t) => {
  const rings = reviewShape();
  const vertices = rings.reduce((sum, ring) => sum + ring.length, 0);
  const budget = new RingGroupingBudget(Infinity);
  const polygons = organizeRings(rings, budget);
  t.equal(polygons.length, 7001, 'every ring outside the exterior is an exterior of its own');
  t.equal(polygons[0]!.length, 1, 'the exterior has no hole');
  t.ok(
    budget.steps < 50 * rings.length,
    `${budget.steps} steps for ${rings.length} rings of ${vertices} vertices (every hole against every vertex: 280,000,000)`,
  );
});

t.test('issue 51: holes inside a long exterior are each placed by reading the few edges at their height', async (t) => {
  const rings = [circle(0, 0, 1000, 40_000, true)];
  for (let index = 0; index < 7000; index += 1) rings.push(square(-500 + (index % 100) * 10, -500 + Math.floor(index / 100) * 10, 2));
  const budget = new RingGroupingBudget(Infinity);
  const polygons = organizeRings(rings, budget);
  t.equal(polygons.length, 1);
  t.equal(polygons[0]!.length, 7001, 'one exterior with every hole');
  t.ok(budget.steps < 7000 * 100, `${budget.steps} steps for 7,000 holes`);
});

t.test('a polygon whose grouping would pass the steps budget is refused with GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT', async (t) => {
  // A comb: every horizontal line crosses all its teeth, and each ring between two teeth is tested against all of them.
  const teeth = 400;
  const comb: Coordinate[] = [[0, 0]];
  for (let tooth = 0; tooth < teeth; tooth += 1) comb.push([tooth * 4, 100], [tooth * 4 + 2, 100], [tooth * 4 + 2, 1]);
  comb.push([teeth * 4, 1], [teeth * 4, 0], [0, 0]);
  const between = Array.from({ length: teeth - 1 }, (_, tooth) => square(tooth * 4 + 2.5, 50));
  const rings = [comb, ...between]; // the comb drawn clockwise, as Esri draws exteriors
  const spent = new RingGroupingBudget(Infinity);
  t.equal(organizeRings(rings, spent).length, teeth, 'the rings between the teeth are exteriors of their own');
  t.ok(spent.steps > 100_000, `${spent.steps} steps`);
  t.throws(() => organizeRings(rings, new RingGroupingBudget(100_000)), {
    code: 'GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT',
    message: /grouping its rings takes more than 100,000 steps/,
  });
});

// The grouping before issue 51, scanning every exterior for every hole: the reference the indexed one must equal.
function referenceOrganize(rings: readonly Coordinate[][]): Coordinate[][][] {
  const area2 = (ring: readonly Coordinate[]): number =>
    ring.slice(0, -1).reduce((sum, [x1, y1], index) => sum + x1! * ring[index + 1]![1]! - ring[index + 1]![0]! * y1!, 0);
  const pointIn = (x: number, y: number, ring: readonly Coordinate[]): number => {
    let inside = false;
    for (let index = 0; index < ring.length - 1; index += 1) {
      const [x1, y1] = ring[index] as [number, number];
      const [x2, y2] = ring[index + 1] as [number, number];
      const cross = (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1);
      if (cross === 0 && x >= Math.min(x1, x2) && x <= Math.max(x1, x2) && y >= Math.min(y1, y2) && y <= Math.max(y1, y2)) return 0;
      if (y1 > y !== y2 > y && x < ((x2 - x1) * (y - y1)) / (y2 - y1) + x1) inside = !inside;
    }
    return inside ? 1 : -1;
  };
  const within = (inner: readonly Coordinate[], outer: readonly Coordinate[]): boolean => {
    for (const [x, y] of inner as [number, number][]) {
      const where = pointIn(x, y, outer);
      if (where !== 0) return where === 1;
    }
    return true;
  };
  const exteriors: { ring: Coordinate[]; area: number; holes: Coordinate[][] }[] = [];
  const holes: Coordinate[][] = [];
  for (const raw of rings) {
    const closed = raw[0]![0] === raw.at(-1)![0] && raw[0]![1] === raw.at(-1)![1] ? raw : [...raw, [...raw[0]!]];
    if (closed.length < 4) continue;
    const area = area2(closed);
    if (area < 0) exteriors.push({ ring: closed.toReversed(), area: -area, holes: [] });
    else if (area > 0) holes.push(closed.toReversed());
  }
  const bySize = [...exteriors].sort((a, b) => a.area - b.area);
  for (const hole of holes) {
    const owner = bySize.find((exterior) => within(hole, exterior.ring));
    if (owner === undefined) exteriors.push({ ring: hole.toReversed(), area: 0, holes: [] });
    else owner.holes.push(hole);
  }
  return exteriors.map((exterior) => [exterior.ring, ...exterior.holes]);
}

t.test('rings of any shape, orientation, nesting or crossing, long or short: grouped as the full scan groups them', async (t) => {
  // Small integer coordinates, so that vertices often fall on another ring's edges or vertices.
  const point = fc.tuple(fc.integer({ min: -12, max: 12 }), fc.integer({ min: -12, max: 12 }));
  const star = fc
    .record({
      cx: fc.integer({ min: -8, max: 8 }),
      cy: fc.integer({ min: -8, max: 8 }),
      radii: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 3, maxLength: 90 }),
      clockwise: fc.boolean(),
    })
    .map(({ cx, cy, radii, clockwise }) => {
      const ring = radii.map((radius, index) => {
        const angle = ((clockwise ? -index : index) * 2 * Math.PI) / radii.length;
        return [Math.round(cx + radius * Math.cos(angle)), Math.round(cy + radius * Math.sin(angle))];
      });
      return [...ring, [...ring[0]!]];
    });
  const ring = fc.oneof(
    fc.array(point, { minLength: 3, maxLength: 8 }).map((points) => points.map(([x, y]) => [x, y])),
    star,
  );
  fc.assert(
    fc.property(fc.array(ring, { minLength: 1, maxLength: 12 }), (rings) => {
      t.same(organizeRings(rings), referenceOrganize(rings));
      return true;
    }),
    { numRuns: 400 },
  );
  t.pass('400 random sets of rings');
});
