import fc from 'fast-check';
import t, { type Test } from 'tap';
import { AdminError } from '../../../src/emulator/admin-error.js';
import { intersectsEnvelope, normalizeWkid, parseEnvelope, project } from '../../../src/emulator/features/geometry.js';
import type { Envelope, Geometry, PointGeometry, PolygonGeometry, PolylineGeometry } from '../../../src/emulator/features/types.js';

const R = 6_378_137;
/** Half the width of the Web Mercator world: 180° of longitude, in metres (the EPSG:3857 extent). */
const HALF_WORLD_M = 20_037_508.342789244;

/** Web Mercator y by the inverse Gudermannian, a different form of the formula project uses. */
const mercatorY = (latitude: number): number => R * Math.atanh(Math.sin((latitude * Math.PI) / 180));

/** Asserts that `fn` throws the admin API's 400 whose message names `parameter`. */
function throws400(t: Test, fn: () => unknown, parameter: string, detail?: RegExp): void {
  let error: unknown;
  try {
    fn();
  } catch (caught) {
    error = caught;
  }
  if (!(error instanceof AdminError)) {
    t.fail(`should throw an AdminError, got ${String(error)}`);
    return;
  }
  t.equal(error.code, 400);
  t.match(error.message, `'${parameter}'`);
  if (detail !== undefined) t.match(error.message, detail);
}

t.test('normalizeWkid reads numbers, numeric strings and spatial-reference JSON, Web Mercator as 3857', async (t) => {
  t.equal(normalizeWkid(4326), 4326);
  t.equal(normalizeWkid(' 4326 '), 4326);
  t.equal(normalizeWkid(102100), 3857);
  t.equal(normalizeWkid('900913'), 3857);
  t.equal(normalizeWkid(3857), 3857);
  t.equal(normalizeWkid(2193), 2193, 'a wkid it does not project is still read');
  t.equal(normalizeWkid({ wkid: 4326 }), 4326);
  t.equal(normalizeWkid({ wkid: 102100, latestWkid: 3857 }), 3857);
  t.equal(normalizeWkid({ latestWkid: 3857 }), 3857);
  t.equal(normalizeWkid({ wkid: 102100 }), 3857);
  t.equal(normalizeWkid('{"wkid":102100,"latestWkid":3857}'), 3857);
  t.equal(normalizeWkid('{"wkid":"4326"}'), 4326);
});

t.test('normalizeWkid refuses anything else with a 400 naming the parameter', async (t) => {
  for (const bad of [
    '',
    'abc',
    '43.26',
    '-4326',
    '0',
    0,
    4326.5,
    NaN,
    null,
    undefined,
    true,
    [],
    {},
    '{"wkt":"GEOGCS[…]"}',
    '{not json',
    { wkid: 'x' },
  ]) {
    throws400(t, () => normalizeWkid(bad, 'inSR'), 'inSR');
  }
  throws400(t, () => normalizeWkid('x'), 'outSR', /must be a wkid/);
});

t.test('project puts a point in Web Mercator by the spherical formulas', async (t) => {
  const { x, y } = project({ x: -117.1956, y: 34.0564 }, 4326, 3857) as PointGeometry;
  t.ok(Math.abs(x - (-117.1956 / 180) * HALF_WORLD_M) < 1e-6, `x = ${x}`);
  t.ok(Math.abs(y - mercatorY(34.0564)) < 1e-6, `y = ${y}`);
  t.ok(Math.abs(x - -13_046_154.52) < 0.01 && Math.abs(y - 4_036_377.68) < 0.01, 'Redlands, in metres');
  const corner = project({ x: 180, y: 85.0511287798066 }, 4326, 102100) as PointGeometry;
  t.ok(Math.abs(corner.x - HALF_WORLD_M) < 1e-6 && Math.abs(corner.y - HALF_WORLD_M) < 1e-3, 'the corner of the square world');
  const origin = project({ x: 0, y: 0 }, 4326, 3857) as PointGeometry;
  t.ok(Math.abs(origin.x) < 1e-6 && Math.abs(origin.y) < 1e-6, 'the origin stays put');
});

t.test('project clamps latitudes past the edge of Web Mercator rather than answering infinity', async (t) => {
  const pole = project({ x: 0, y: 90 }, 4326, 3857) as PointGeometry;
  t.ok(Math.abs(pole.y - HALF_WORLD_M) < 1e-3, `y = ${pole.y}`);
  const south = project({ x: 0, y: -89 }, 4326, 3857) as PointGeometry;
  t.ok(Math.abs(south.y + HALF_WORLD_M) < 1e-3, `y = ${south.y}`);
});

t.test('project brings Web Mercator back to degrees', async (t) => {
  const { x, y } = project({ x: HALF_WORLD_M / 2, y: mercatorY(-45) }, 3857, 4326) as PointGeometry;
  t.ok(Math.abs(x - 90) < 1e-9 && Math.abs(y - -45) < 1e-9, `${x}, ${y}`);
});

t.test('project round trips points, paths and rings, keeping z and m', async (t) => {
  const point = { x: 151.2093, y: -33.8688, z: 12.5, m: 3 };
  const there = project(point, 4326, 3857) as PointGeometry;
  t.equal(there.z, 12.5);
  t.equal(there.m, 3);
  const back = project(there, 102100, 4326) as PointGeometry;
  t.ok(Math.abs(back.x - point.x) < 1e-9 && Math.abs(back.y - point.y) < 1e-9);
  t.same({ z: back.z, m: back.m }, { z: 12.5, m: 3 });

  const line: PolylineGeometry = {
    paths: [
      [
        [-122.4, 37.8, 5, 1],
        [-122.3, 37.7, 6, 2],
      ],
      [[0, 0]],
    ],
  };
  const projected = project(line, 4326, 3857) as PolylineGeometry;
  t.same(
    projected.paths.map((path) => path.map((vertex) => vertex.slice(2))),
    [
      [
        [5, 1],
        [6, 2],
      ],
      [[]],
    ],
    'z and m of each vertex kept',
  );
  t.ok(Math.abs(projected.paths[0]![1]![1]! - mercatorY(37.7)) < 1e-6);
  const lineBack = project(projected, 3857, 4326) as PolylineGeometry;
  lineBack.paths.flat().forEach((vertex, i) => {
    const original = line.paths.flat()[i]!;
    t.ok(
      vertex.every((value, k) => Math.abs(value - original[k]!) < 1e-9),
      `vertex ${i}`,
    );
  });

  const polygon: PolygonGeometry = {
    rings: [
      [
        [10, 10],
        [10, 20],
        [20, 20],
        [10, 10],
      ],
    ],
  };
  const ringsBack = (project(project(polygon, 4326, 900913), 3857, 4326) as PolygonGeometry).rings;
  t.ok(
    ringsBack[0]!.every((vertex, i) => vertex.every((value, k) => Math.abs(value - polygon.rings[0]![i]![k]!) < 1e-9)),
    'rings too',
  );
  t.ok(Math.abs((project(polygon, 4326, 3857) as PolygonGeometry).rings[0]![1]![1]! - mercatorY(20)) < 1e-6);
});

t.test('project drops properties it does not project, such as a spatial reference', async (t) => {
  const withSr = { x: 1, y: 2, spatialReference: { wkid: 4326 } } as Geometry;
  t.notOk('spatialReference' in project(withSr, 4326, 3857));
});

t.test('project returns the very geometry when both wkids name the same spatial reference', async (t) => {
  const point = { x: 1, y: 2 };
  t.equal(project(point, 4326, 4326), point);
  t.equal(project(point, 3857, 102100), point);
  t.equal(project(point, 900913, 3857), point);
});

t.test('project refuses other spatial references with a 400 naming the parameter', async (t) => {
  throws400(t, () => project({ x: 1, y: 2 }, 4326, 2193), 'outSR', /must be 4326, 3857 or 102100, got 2193/);
  throws400(t, () => project({ x: 1, y: 2 }, 27700, 4326, 'inSR'), 'inSR', /got 27700/);
  throws400(t, () => project({ x: 1, y: 2 }, 2193, 2193), 'outSR', /got 2193/);
});

const ENVELOPE: Envelope = { xmin: 0, ymin: 0, xmax: 10, ymax: 10 };
const square = (xmin: number, ymin: number, xmax: number, ymax: number): number[][] => [
  [xmin, ymin],
  [xmin, ymax],
  [xmax, ymax],
  [xmax, ymin],
  [xmin, ymin],
];

t.test('a point meets the envelope inside it or on its edge', async (t) => {
  t.equal(intersectsEnvelope({ x: 5, y: 5 }, ENVELOPE), true);
  t.equal(intersectsEnvelope({ x: 0, y: 5 }, ENVELOPE), true, 'on an edge');
  t.equal(intersectsEnvelope({ x: 10, y: 10 }, ENVELOPE), true, 'on a corner');
  t.equal(intersectsEnvelope({ x: 10.000001, y: 5 }, ENVELOPE), false);
  t.equal(intersectsEnvelope({ x: 5, y: -1 }, ENVELOPE), false);
  t.equal(intersectsEnvelope({ x: 5, y: 5 }, { xmin: 5, ymin: 5, xmax: 5, ymax: 5 }), true, 'an envelope of zero size is a point');
});

t.test('a polyline meets the envelope when any segment touches it, vertices inside or not', async (t) => {
  const line = (...paths: number[][][]): PolylineGeometry => ({ paths });
  t.equal(
    intersectsEnvelope(
      line([
        [-5, 5],
        [15, 5],
      ]),
      ENVELOPE,
    ),
    true,
    'crossing with no vertex inside',
  );
  t.equal(
    intersectsEnvelope(
      line([
        [-5, 20],
        [20, -5],
      ]),
      ENVELOPE,
    ),
    true,
    'a diagonal crossing',
  );
  t.equal(
    intersectsEnvelope(
      line([
        [2, 2],
        [3, 3],
      ]),
      ENVELOPE,
    ),
    true,
    'wholly inside',
  );
  t.equal(
    intersectsEnvelope(
      line([
        [-5, 0],
        [15, 0],
      ]),
      ENVELOPE,
    ),
    true,
    'along an edge',
  );
  t.equal(
    intersectsEnvelope(
      line([
        [15, 5],
        [10, 5],
      ]),
      ENVELOPE,
    ),
    true,
    'ending on an edge',
  );
  t.equal(
    intersectsEnvelope(
      line([
        [5, 15],
        [15, 5],
      ]),
      ENVELOPE,
    ),
    true,
    'through a corner only',
  );
  t.equal(
    intersectsEnvelope(
      line([
        [6, 15],
        [15, 6],
      ]),
      ENVELOPE,
    ),
    false,
    'passing the corner outside',
  );
  t.equal(
    intersectsEnvelope(
      line([
        [-5, -5],
        [-1, 20],
      ]),
      ENVELOPE,
    ),
    false,
    'its box overlaps the envelope, the line does not',
  );
  t.equal(
    intersectsEnvelope(
      line(
        [
          [20, 20],
          [30, 30],
        ],
        [
          [5, -5],
          [5, 15],
        ],
      ),
      ENVELOPE,
    ),
    true,
    'a later part crossing',
  );
  t.equal(
    intersectsEnvelope(
      line(
        [
          [20, 20],
          [30, 30],
        ],
        [[-1, -1]],
      ),
      ENVELOPE,
    ),
    false,
    'disjoint parts',
  );
  t.equal(intersectsEnvelope(line([[5, 5]]), ENVELOPE), true, 'a path of one vertex is a point');
  t.equal(intersectsEnvelope(line([]), ENVELOPE), false, 'an empty path meets nothing');
  t.equal(intersectsEnvelope(line(), ENVELOPE), false, 'no path meets nothing');
});

t.test('polylines that @turf/boolean-intersects 7.4.0 answers wrongly (collinear overlap, a repeated vertex)', async (t) => {
  t.equal(
    intersectsEnvelope(
      {
        paths: [
          [
            [6, 5],
            [6, -6],
            [5, 4],
          ],
        ],
      },
      { xmin: 6, ymin: -4, xmax: 12, ymax: 1 },
    ),
    true,
    'a segment along the left edge, ends beyond it',
  );
  t.equal(
    intersectsEnvelope(
      {
        paths: [
          [
            [5, -1],
            [6, 4],
            [-5, 4],
            [-5, 4],
          ],
        ],
      },
      { xmin: -3, ymin: 0, xmax: 2, ymax: 6 },
    ),
    true,
    'a crossing segment followed by a repeated vertex',
  );
});

t.test('a polygon meets the envelope when its boundary crosses it, it holds it, or it lies inside it', async (t) => {
  const polygon = (...rings: number[][][]): PolygonGeometry => ({ rings });
  t.equal(intersectsEnvelope(polygon(square(-10, -10, 20, 20)), ENVELOPE), true, 'the envelope inside the polygon');
  t.equal(intersectsEnvelope(polygon(square(2, 2, 4, 4)), ENVELOPE), true, 'the polygon inside the envelope');
  t.equal(intersectsEnvelope(polygon(square(5, 5, 15, 15)), ENVELOPE), true, 'overlapping');
  t.equal(intersectsEnvelope(polygon(square(-5, 3, 15, 6)), ENVELOPE), true, 'crossing, no vertex inside either');
  t.equal(intersectsEnvelope(polygon(square(10, 0, 20, 10)), ENVELOPE), true, 'touching along an edge');
  t.equal(intersectsEnvelope(polygon(square(10, 10, 20, 20)), ENVELOPE), true, 'touching at a corner');
  t.equal(intersectsEnvelope(polygon(square(11, 0, 20, 10)), ENVELOPE), false, 'disjoint');
  t.equal(
    intersectsEnvelope(
      polygon([
        [-10, 31],
        [31, -10],
        [31, 31],
        [-10, 31],
      ]),
      ENVELOPE,
    ),
    false,
    'a triangle whose box holds the envelope, the triangle not',
  );
  t.equal(
    intersectsEnvelope(
      polygon([
        [-10, 30],
        [30, -10],
        [30, 30],
        [-10, 30],
      ]),
      ENVELOPE,
    ),
    true,
    'the same triangle moved to touch the corner',
  );
  t.equal(intersectsEnvelope(polygon(square(0, 0, 10, 10)), ENVELOPE), true, 'the same rectangle');
  const open = [
    [-5, 5],
    [-5, 20],
    [20, 20],
  ];
  t.equal(intersectsEnvelope(polygon(open), ENVELOPE), true, 'a ring left open is closed: its closing edge crosses');
  t.equal(intersectsEnvelope({ paths: [open] }, ENVELOPE), false, 'the same vertices as a path do not meet it');
});

t.test('holes: an envelope inside a hole does not meet the polygon, one touching the hole does', async (t) => {
  const outer = square(-10, -10, 20, 20);
  const hole = square(-1, -1, 11, 11).reverse();
  t.equal(intersectsEnvelope({ rings: [outer, hole] }, ENVELOPE), false, 'wholly in the hole');
  t.equal(intersectsEnvelope({ rings: [outer] }, ENVELOPE), true, 'the same polygon without its hole');
  t.equal(
    intersectsEnvelope({ rings: [outer, square(0, 0, 10, 10).reverse()] }, ENVELOPE),
    true,
    'the hole is the envelope: boundaries touch',
  );
  t.equal(intersectsEnvelope({ rings: [outer, square(-1, -1, 11, 11)] }, ENVELOPE), false, 'either orientation of the hole');
  t.equal(intersectsEnvelope({ rings: [outer, hole] }, { xmin: 5, ymin: 5, xmax: 15, ymax: 15 }), true, 'across the edge of the hole');
  const island = square(2, 2, 8, 8);
  t.equal(
    intersectsEnvelope({ rings: [outer, hole, island] }, { xmin: 4, ymin: 4, xmax: 6, ymax: 6 }),
    true,
    'inside an island in the hole',
  );
  t.equal(intersectsEnvelope({ rings: [square(-10, -10, -5, -5), square(15, 15, 20, 20)] }, ENVELOPE), false, 'between two parts');
  t.equal(intersectsEnvelope({ rings: [square(-10, -10, -5, -5), square(-1, -1, 20, 20)] }, ENVELOPE), true, 'inside a later part');
});

/** The geometry mirrored by `flip` (a map of the plane onto itself). */
const mapped = (geometry: Geometry, flip: (x: number, y: number) => [number, number]): Geometry => {
  if ('x' in geometry) {
    const [x, y] = flip(geometry.x, geometry.y);
    return { x, y };
  }
  const lines = (parts: number[][][]) => parts.map((part) => part.map(([x = 0, y = 0]) => flip(x, y)));
  return 'paths' in geometry ? { paths: lines(geometry.paths) } : { rings: lines(geometry.rings) };
};
const mappedEnvelope = (envelope: Envelope, flip: (x: number, y: number) => [number, number]): Envelope => {
  const [x1, y1] = flip(envelope.xmin, envelope.ymin);
  const [x2, y2] = flip(envelope.xmax, envelope.ymax);
  return { xmin: Math.min(x1, x2), ymin: Math.min(y1, y2), xmax: Math.max(x1, x2), ymax: Math.max(y1, y2) };
};

const coordinate = fc.integer({ min: -8, max: 8 });
const vertex = fc.tuple(coordinate, coordinate).map(([x, y]) => [x, y]);
const anyGeometry: fc.Arbitrary<Geometry> = fc.oneof(
  fc.tuple(coordinate, coordinate).map(([x, y]) => ({ x, y })),
  fc.array(fc.array(vertex, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 2 }).map((paths) => ({ paths })),
  fc.array(fc.array(vertex, { minLength: 3, maxLength: 6 }), { minLength: 1, maxLength: 3 }).map((rings) => ({
    rings: rings.map((ring) => [...ring, ring[0]!]),
  })),
);
const anyEnvelope = fc
  .tuple(coordinate, coordinate, fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 8 }))
  .map(([x, y, width, height]) => ({ xmin: x, ymin: y, xmax: x + width, ymax: y + height }));

t.test('intersection does not change when the plane is mirrored or turned, nor with vertex order', async () => {
  const flips: ((x: number, y: number) => [number, number])[] = [
    (x, y) => [-x, y],
    (x, y) => [x, -y],
    (x, y) => [y, x],
    (x, y) => [-y, x],
    (x, y) => [x + 0.5, y - 3],
  ];
  fc.assert(
    fc.property(anyGeometry, anyEnvelope, (geometry, envelope) => {
      const answer = intersectsEnvelope(geometry, envelope);
      const reversed: Geometry =
        'paths' in geometry
          ? { paths: geometry.paths.map((path) => [...path].reverse()) }
          : 'rings' in geometry
            ? { rings: geometry.rings.map((ring) => [...ring].reverse()) }
            : geometry;
      return (
        flips.every((flip) => intersectsEnvelope(mapped(geometry, flip), mappedEnvelope(envelope, flip)) === answer) &&
        intersectsEnvelope(reversed, envelope) === answer
      );
    }),
    { numRuns: 3_000 },
  );
});

t.test('a vertex in the envelope means they meet; boxes apart mean they do not', async () => {
  fc.assert(
    fc.property(anyGeometry, anyEnvelope, (geometry, envelope) => {
      const vertices = 'x' in geometry ? [[geometry.x, geometry.y]] : 'paths' in geometry ? geometry.paths.flat() : geometry.rings.flat();
      const inside = ([x = 0, y = 0]: number[]) => x >= envelope.xmin && x <= envelope.xmax && y >= envelope.ymin && y <= envelope.ymax;
      const xs = vertices.map(([x = 0]) => x);
      const ys = vertices.map(([, y = 0]) => y);
      const apart =
        Math.max(...xs) < envelope.xmin ||
        Math.min(...xs) > envelope.xmax ||
        Math.max(...ys) < envelope.ymin ||
        Math.min(...ys) > envelope.ymax;
      const answer = intersectsEnvelope(geometry, envelope);
      return (!vertices.some(inside) || answer) && (!apart || !answer);
    }),
    { numRuns: 3_000 },
  );
});

t.test('parseEnvelope reads xmin,ymin,xmax,ymax', async (t) => {
  t.same(parseEnvelope('-117.2,34.0,-117.1,34.1', 'geometry'), { envelope: { xmin: -117.2, ymin: 34, xmax: -117.1, ymax: 34.1 } });
  t.same(parseEnvelope(' 1 , 2 , 3 , 4 ', 'geometry'), { envelope: { xmin: 1, ymin: 2, xmax: 3, ymax: 4 } });
  t.same(parseEnvelope('3,4,1,2', 'geometry'), { envelope: { xmin: 1, ymin: 2, xmax: 3, ymax: 4 } }, 'corners the wrong way round');
  t.same(parseEnvelope('-1e7,0,1e7,5e6', 'geometry'), { envelope: { xmin: -1e7, ymin: 0, xmax: 1e7, ymax: 5e6 } });
  t.notOk('wkid' in parseEnvelope('1,2,3,4', 'geometry'), 'no spatial reference, no wkid');
});

t.test('parseEnvelope reads envelope JSON, text or parsed, with its spatial reference', async (t) => {
  t.same(parseEnvelope('{"xmin":1,"ymin":2,"xmax":3,"ymax":4,"spatialReference":{"wkid":102100,"latestWkid":3857}}', 'geometry'), {
    envelope: { xmin: 1, ymin: 2, xmax: 3, ymax: 4 },
    wkid: 3857,
  });
  t.same(parseEnvelope({ xmin: 1, ymin: 2, xmax: 3, ymax: 4, spatialReference: { wkid: 4326 } }, 'geometry'), {
    envelope: { xmin: 1, ymin: 2, xmax: 3, ymax: 4 },
    wkid: 4326,
  });
  t.same(parseEnvelope({ xmin: 1, ymin: 2, xmax: 3, ymax: 4 }, 'geometry'), { envelope: { xmin: 1, ymin: 2, xmax: 3, ymax: 4 } });
  t.same(parseEnvelope({ xmin: 1, ymin: 2, xmax: 3, ymax: 4, spatialReference: null }, 'geometry'), {
    envelope: { xmin: 1, ymin: 2, xmax: 3, ymax: 4 },
  });
});

t.test('parseEnvelope refuses anything else with a 400 naming the parameter', async (t) => {
  for (const bad of [
    '',
    '1,2,3',
    '1,2,3,4,5',
    '1,2,,4',
    'a,b,c,d',
    '1,2,3,Infinity',
    '1,2,3,0x10',
    '{"xmin":1,"ymin":2,"xmax":3}',
    '{"xmin":"1","ymin":2,"xmax":3,"ymax":4}',
    '{"xmin":1,"ymin":2,"xmax":3,"ymax":null}',
    '{"x":1,"y":2}',
    '{broken',
    '[1,2,3,4]',
    null,
    undefined,
    42,
    { xmin: 1, ymin: 2, xmax: 3, ymax: NaN },
  ]) {
    throws400(t, () => parseEnvelope(bad, 'geometry'), 'geometry');
  }
  throws400(t, () => parseEnvelope({ xmin: 1, ymin: 2, xmax: 3, ymax: 4, spatialReference: { wkt: 'PROJCS[…]' } }, 'geometry'), 'geometry');
});
