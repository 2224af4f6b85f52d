import t from 'tap';
import { parcelsLayers } from '../../src/emulator/features/layer-schemas.js';
import { GeohookError } from '../../src/errors.js';
import type { MirrorLayer } from '../../src/mirror/column-types.js';
import { MAX_GEOMETRY_PARTS } from '../../src/mirror/geometry-limits.js';
import { createRowEncoder } from '../../src/mirror/row-encoder.js';
import { rowColumnsOf } from '../../src/mirror/row-values.js';
import { capturingLogger } from '../helpers/log-capture.js';

const parcels = parcelsLayers()[0] as MirrorLayer;
const row = {
  attributes: { objectid: 7, owner: 'a\tb', assessed_value: 9007199254740993n },
  geometry: {
    rings: [
      [
        [0, 0],
        [0, 1],
        [1, 1],
        [1, 0],
        [0, 0],
      ],
    ],
  },
};

t.test('rows are encoded on a worker thread, as on the calling thread; errors come back with their class, code and feature', async (t) => {
  const { logger, lines } = capturingLogger('debug');
  const encoder = createRowEncoder(logger);
  t.teardown(() => encoder.close());
  t.same(await encoder.encode(parcels, [row]), [rowColumnsOf(parcels).values(row)]);
  const [encoded] = lines.map((line) => JSON.parse(line) as { msg: string; threadId: number; rows: number });
  t.match(encoded, { msg: 'mirror: rows encoded', rows: 1 });
  t.not(encoded!.threadId, 0, 'not the main thread');

  const tooLarge = { attributes: { objectid: 9 }, geometry: { rings: Array.from({ length: MAX_GEOMETRY_PARTS + 1 }, () => []) } };
  const refused = await encoder.encode(parcels, [row, tooLarge]).catch((err: unknown) => err);
  t.ok(refused instanceof GeohookError);
  t.match(refused, { code: 'GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT', message: /^feature 9: geometry refused: 100,001 rings/ });
  await t.rejects(encoder.encode(parcels, [{ attributes: { objectid: 10 }, geometry: { x: 1 } }]), TypeError);
  t.same(await encoder.encode(parcels, [row]), [rowColumnsOf(parcels).values(row)], 'the thread goes on');
});
