import t from 'tap';
import { toEwkbHex } from '../../src/mirror/esri-geometry.js';
import { MAX_GEOMETRY_PARTS, MAX_GEOMETRY_VERTICES } from '../../src/mirror/geometry-limits.js';

const square = (x: number): number[][] => [
  [x, 0],
  [x, 1],
  [x + 1, 1],
  [x + 1, 0],
  [x, 0],
];
const LIMIT = { code: 'GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT' };

t.test('a geometry with more vertices than the limit is refused before it is read, whatever its type', async (t) => {
  const points = Array.from({ length: MAX_GEOMETRY_VERTICES + 1 }, (_, index) => [index, 0]);
  t.throws(() => toEwkbHex({ points }, { type: 'MultiPoint', srid: 4326 }), {
    ...LIMIT,
    message: /1,000,001 vertices, more than 1,000,000/,
  });
  t.throws(() => toEwkbHex({ paths: [points] }, { type: 'MultiLineString', srid: 4326 }), LIMIT);
  const ring = [...points, [0, 0]];
  t.throws(() => toEwkbHex({ rings: [ring] }, { type: 'MultiPolygon', srid: 4326 }), LIMIT);
  t.type(toEwkbHex({ points: points.slice(1) }, { type: 'MultiPoint', srid: 4326 }), 'string', 'the limit itself is taken');
});

t.test('a geometry with more rings or paths than the limit is refused', async (t) => {
  const rings = Array.from({ length: MAX_GEOMETRY_PARTS + 1 }, (_, index) => square(index * 2));
  t.throws(() => toEwkbHex({ rings }, { type: 'MultiPolygon', srid: 4326 }), { ...LIMIT, message: /100,001 rings, more than 100,000/ });
  t.throws(() => toEwkbHex({ paths: rings }, { type: 'MultiLineString', srid: 4326 }), { ...LIMIT, message: /paths/ });
});
