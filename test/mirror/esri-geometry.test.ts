import fc from 'fast-check';
import type pg from 'pg';
import t from 'tap';
import { postgisTypeOf, sridOf, toEwkbHex, type GeometryTarget } from '../../src/mirror/esri-geometry.js';
import { organizeRings } from '../../src/mirror/polygon-rings.js';
import { startPostgres } from '../helpers/postgres.js';

const postgres = await startPostgres(t);
const client = await postgres.connect(t);

interface Read {
  valid: boolean;
  equal: boolean;
  ewkt: string;
  ccw: boolean;
}

/** The encoded geometry as PostGIS reads it: valid, equal (ST_Equals) to the expected EWKT, its EWKT, and whether its polygons are OGC-oriented. */
async function read(db: pg.Client, hex: string | null, expected: string | null): Promise<Read> {
  const { rows } = await db.query<Read>(
    `SELECT ST_IsValid(g) AS valid, ST_SRID(g) = ST_SRID(e) AND ST_Equals(g, e) AS equal, ST_AsEWKT(g) AS ewkt,
            ST_IsPolygonCCW(g) AS ccw
     FROM (SELECT $1::geometry AS g, ST_GeomFromEWKT($2) AS e) AS pair`,
    [hex, expected],
  );
  return rows[0]!;
}

const MERCATOR: GeometryTarget = { type: 'MultiPolygon', srid: 3857 };

t.test('a point, exact to the last bit of its doubles', async (t) => {
  const hex = toEwkbHex({ x: 0.1 + 0.2, y: -1234567.891234567 }, { type: 'Point', srid: 3857 });
  const result = await read(client, hex, 'SRID=3857;POINT(0.30000000000000004 -1234567.891234567)');
  t.ok(result.valid);
  t.ok(result.equal);
  const { rows } = await client.query<{ x: number; y: number }>('SELECT ST_X($1::geometry) AS x, ST_Y($1::geometry) AS y', [hex]);
  t.equal(rows[0]!.x, 0.1 + 0.2);
  t.equal(rows[0]!.y, -1234567.891234567);
});

t.test('a point with z and m keeps both; a layer with z gives a point without one z 0', async (t) => {
  const zm = toEwkbHex({ x: 1, y: 2, z: 3, m: 4 }, { type: 'Point', srid: 4326, hasZ: true, hasM: true });
  t.equal((await read(client, zm, null)).ewkt, 'SRID=4326;POINT(1 2 3 4)');
  const z = toEwkbHex({ x: 1, y: 2 }, { type: 'Point', srid: 4326, hasZ: true });
  t.equal((await read(client, z, null)).ewkt, 'SRID=4326;POINT(1 2 0)');
  const { rows } = await client.query<{ dims: number; m: number | null }>(
    'SELECT ST_NDims($1::geometry) AS dims, ST_M($1::geometry) AS m',
    [toEwkbHex({ x: 1, y: 2 }, { type: 'Point', srid: 4326, hasM: true })],
  );
  t.equal(rows[0]!.dims, 3, 'x, y, m');
  t.ok(Number.isNaN(Number(rows[0]!.m)), 'no measure is NaN');
});

t.test('no geometry and an empty point are NULL; a geometry of another type is refused', async (t) => {
  t.equal(toEwkbHex(null, MERCATOR), null);
  t.equal(toEwkbHex(undefined, MERCATOR), null);
  t.equal(toEwkbHex({ x: null, y: null }, { type: 'Point', srid: 3857 }), null);
  t.equal(toEwkbHex({ x: 'NaN' }, { type: 'Point', srid: 3857 }), null);
  t.throws(() => toEwkbHex({ rings: [] }, { type: 'Point', srid: 3857 }), TypeError);
  t.throws(() => toEwkbHex({ x: 1, y: 2 }, MERCATOR), TypeError);
  t.throws(
    () =>
      toEwkbHex(
        {
          paths: [
            [
              [0, 0],
              ['a', 1],
            ],
          ],
        },
        { type: 'MultiLineString', srid: 4326 },
      ),
    TypeError,
  );
  t.throws(() => toEwkbHex('POINT(1 2)', MERCATOR), TypeError);
});

t.test('a multipoint', async (t) => {
  const hex = toEwkbHex(
    {
      points: [
        [1, 2],
        [3, 4],
      ],
    },
    { type: 'MultiPoint', srid: 4326 },
  );
  const result = await read(client, hex, 'SRID=4326;MULTIPOINT((1 2),(3 4))');
  t.ok(result.valid);
  t.ok(result.equal);
});

t.test('a polyline of two paths is a MultiLineString; z from hasZ', async (t) => {
  const paths = [
    [
      [0, 0],
      [1, 1],
      [2, 0],
    ],
    [
      [5, 5],
      [6, 6],
    ],
  ];
  const result = await read(
    client,
    toEwkbHex({ paths }, { type: 'MultiLineString', srid: 4326 }),
    'SRID=4326;MULTILINESTRING((0 0,1 1,2 0),(5 5,6 6))',
  );
  t.ok(result.valid);
  t.ok(result.equal);
  const withZ = toEwkbHex(
    {
      hasZ: true,
      paths: [
        [
          [0, 0, 10],
          [1, 1, 11],
        ],
      ],
    },
    { type: 'MultiLineString', srid: 4326, hasZ: true },
  );
  t.equal((await read(client, withZ, null)).ewkt, 'SRID=4326;MULTILINESTRING((0 0 10,1 1 11))');
});

t.test('a polygon with a hole: Esri clockwise exterior and counter-clockwise hole become one valid OGC-oriented polygon', async (t) => {
  const rings = [
    [
      [0, 0],
      [0, 10],
      [10, 10],
      [10, 0],
      [0, 0],
    ],
    [
      [2, 2],
      [4, 2],
      [4, 4],
      [2, 4],
      [2, 2],
    ],
  ];
  const result = await read(
    client,
    toEwkbHex({ rings }, MERCATOR),
    'SRID=3857;MULTIPOLYGON(((0 0,10 0,10 10,0 10,0 0),(2 2,2 4,4 4,4 2,2 2)))',
  );
  t.ok(result.valid);
  t.ok(result.equal);
  t.ok(result.ccw, 'exterior counter-clockwise, hole clockwise');
  t.equal(result.ewkt, 'SRID=3857;MULTIPOLYGON(((0 0,10 0,10 10,0 10,0 0),(2 2,2 4,4 4,4 2,2 2)))');
});

t.test('two parts, their holes listed after both exteriors in the other order: each hole goes to its exterior', async (t) => {
  const rings = [
    [
      [0, 0],
      [0, 10],
      [10, 10],
      [10, 0],
      [0, 0],
    ],
    [
      [20, 0],
      [20, 10],
      [30, 10],
      [30, 0],
      [20, 0],
    ],
    [
      [22, 2],
      [24, 2],
      [24, 4],
      [22, 4],
      [22, 2],
    ],
    [
      [2, 2],
      [4, 2],
      [4, 4],
      [2, 4],
      [2, 2],
    ],
  ];
  const expected =
    'SRID=3857;MULTIPOLYGON(((0 0,10 0,10 10,0 10,0 0),(2 2,2 4,4 4,4 2,2 2)),((20 0,30 0,30 10,20 10,20 0),(22 2,22 4,24 4,24 2,22 2)))';
  const result = await read(client, toEwkbHex({ rings }, MERCATOR), expected);
  t.ok(result.valid);
  t.ok(result.equal);
  t.ok(result.ccw);
});

t.test('an island inside a hole is a part of its own; the hole stays with the larger exterior', async (t) => {
  const rings = [
    [
      [4, 4],
      [4, 6],
      [6, 6],
      [6, 4],
      [4, 4],
    ],
    [
      [0, 0],
      [0, 10],
      [10, 10],
      [10, 0],
      [0, 0],
    ],
    [
      [2, 2],
      [8, 2],
      [8, 8],
      [2, 8],
      [2, 2],
    ],
  ];
  const expected = 'SRID=3857;MULTIPOLYGON(((0 0,10 0,10 10,0 10,0 0),(2 2,2 8,8 8,8 2,2 2)),((4 4,6 4,6 6,4 6,4 4)))';
  const result = await read(client, toEwkbHex({ rings }, MERCATOR), expected);
  t.ok(result.valid);
  t.ok(result.equal);
});

t.test(
  'an unclosed ring is closed; a ring drawn counter-clockwise with no exterior around it is an exterior; degenerate rings are dropped',
  async (t) => {
    const unclosed = await read(
      client,
      toEwkbHex(
        {
          rings: [
            [
              [0, 0],
              [0, 1],
              [1, 1],
              [1, 0],
            ],
          ],
        },
        MERCATOR,
      ),
      'SRID=3857;MULTIPOLYGON(((0 0,1 0,1 1,0 1,0 0)))',
    );
    t.ok(unclosed.valid);
    t.ok(unclosed.equal);
    const backwards = await read(
      client,
      toEwkbHex(
        {
          rings: [
            [
              [0, 0],
              [1, 0],
              [1, 1],
              [0, 1],
              [0, 0],
            ],
          ],
        },
        MERCATOR,
      ),
      'SRID=3857;MULTIPOLYGON(((0 0,1 0,1 1,0 1,0 0)))',
    );
    t.ok(backwards.valid);
    t.ok(backwards.equal);
    t.ok(backwards.ccw);
    const degenerate = await read(
      client,
      toEwkbHex(
        {
          rings: [
            [
              [0, 0],
              [0, 1],
              [1, 1],
              [1, 0],
              [0, 0],
            ],
            [
              [5, 5],
              [6, 6],
              [5, 5],
            ],
            [
              [7, 7],
              [8, 8],
              [9, 9],
              [7, 7],
            ],
          ],
        },
        MERCATOR,
      ),
      'SRID=3857;MULTIPOLYGON(((0 0,1 0,1 1,0 1,0 0)))',
    );
    t.ok(degenerate.valid);
    t.ok(degenerate.equal);
    t.same(organizeRings([[]]), []);
  },
);

t.test('a polygon with z keeps each vertex z', async (t) => {
  const rings = [
    [
      [0, 0, 1],
      [0, 10, 2],
      [10, 10, 3],
      [10, 0, 4],
      [0, 0, 1],
    ],
  ];
  const result = await read(client, toEwkbHex({ hasZ: true, rings }, { ...MERCATOR, hasZ: true }), null);
  t.equal(result.ewkt, 'SRID=3857;MULTIPOLYGON(((0 0 1,10 0 4,10 10 3,0 10 2,0 0 1)))');
});

t.test('any set of separate squares, some with a hole, rings in any order and starting anywhere: valid and equal', async (t) => {
  const square = (x: number, y: number, size: number): number[][] => [
    [x, y],
    [x, y + size],
    [x + size, y + size],
    [x + size, y],
    [x, y],
  ];
  /** Starts a closed ring at another vertex. */
  const rotate = (ring: number[][], by: number): number[][] => {
    const open = ring.slice(0, -1);
    const turned = [...open.slice(by % open.length), ...open.slice(0, by % open.length)];
    return [...turned, turned[0]!];
  };
  const wkt = (ring: number[][]) => `(${ring.map(([x, y]) => `${x} ${y}`).join(',')})`;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ hole: fc.boolean(), turn: fc.nat(3), y: fc.integer({ min: -1000, max: 1000 }) }), {
        minLength: 1,
        maxLength: 5,
      }),
      fc.nat(),
      async (cells, seed) => {
        const rings: number[][][] = [];
        const parts: string[] = [];
        cells.forEach((cell, index) => {
          const exterior = square(index * 20, cell.y, 10); // clockwise, as Esri draws exteriors
          rings.push(rotate(exterior, cell.turn));
          const expected = [wkt(exterior)];
          if (cell.hole) {
            const hole = square(index * 20 + 2, cell.y + 2, 3).reverse(); // counter-clockwise
            rings.push(rotate(hole, cell.turn + 1));
            expected.push(wkt(hole));
          }
          parts.push(`(${expected.join(',')})`);
        });
        const shuffled = rings.map((ring, index) => ({ ring, order: (index * 7919 + seed) % 101 })).sort((a, b) => a.order - b.order);
        const result = await read(
          client,
          toEwkbHex({ rings: shuffled.map(({ ring }) => ring) }, MERCATOR),
          `SRID=3857;MULTIPOLYGON(${parts.join(',')})`,
        );
        return result.valid && result.equal && result.ccw;
      },
    ),
    { numRuns: 60 },
  );
  t.pass('60 random multipolygons');
});

t.test('ArcGIS geometry types and spatial references', async (t) => {
  t.equal(postgisTypeOf('esriGeometryPolygon'), 'MultiPolygon');
  t.equal(postgisTypeOf('esriGeometryEnvelope'), undefined);
  t.equal(sridOf({ wkid: 102100, latestWkid: 3857 }), 3857);
  t.equal(sridOf({ wkid: 102100 }), 3857);
  t.equal(sridOf({ wkid: 2193 }), 2193);
  t.equal(sridOf(undefined), 0);
  t.equal(sridOf({ wkid: -1 }), 0);
});
