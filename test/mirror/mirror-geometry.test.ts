import t from 'tap';
import { runCli } from '../helpers/cli.js';
import { caughtUp, differences, mirrorParcels } from '../helpers/mirror.js';
import { startPostgres } from '../helpers/postgres.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// Each test starts geohook, the emulator and PostgreSQL processes: past tap's 60 s beside the other test files.
t.setTimeout(180_000);

// Issue 51 (security review 2, N2): no polygon edit may hold the receiver's event loop.
const redis = await startRedis(t);
const postgres = await startPostgres(t);
const setUp = (t: Parameters<typeof mirrorParcels>[0], parcels: number) => mirrorParcels(t, { redis, postgres }, parcels);

/** A clockwise circle of `vertices` around (cx, cy), closed: an Esri exterior. */
const clockwiseCircle = (cx: number, cy: number, radius: number, vertices: number): number[][] => {
  const ring = Array.from({ length: vertices }, (_, index) => {
    const angle = (-index * 2 * Math.PI) / vertices;
    return [Math.round(cx + radius * Math.cos(angle)), Math.round(cy + radius * Math.sin(angle))];
  });
  return [...ring, ring[0]!];
};
/** A counter-clockwise square: a hole, or, outside every exterior, an exterior drawn the other way round. */
const ccwSquare = (x: number, y: number): number[][] => [
  [x, y],
  [x + 1, y],
  [x + 1, y + 1],
  [x, y + 1],
  [x, y],
];

/** Log lines of `geohook` with this message, parsed. */
const logLines = (geohook: { log: () => string }, msg: string): Record<string, unknown>[] =>
  geohook
    .log()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);

t.test('issue 51 (review 2, N2): the review’s polygon edit is encoded on the row encoder thread while /healthz answers', async (t) => {
  const { emulator, geohook, url, token, schema, client } = await setUp(t, 1);
  await caughtUp(client, schema, url, token);
  // The review's shape at a tenth of its size: a clockwise exterior and many small rings outside it.
  const rings = [clockwiseCircle(0, 0, 100_000, 4000), ...Array.from({ length: 700 }, (_, index) => ccwSquare(200_000 + index * 2, 0))];
  const answers: number[] = [];
  let polling = true;
  const poll = (async () => {
    while (polling) {
      answers.push((await fetch(`${geohook.url}/healthz`)).status);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
    edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'CRAFTED' }, geometry: { rings, spatialReference: { wkid: 102100 } } }] }],
  });
  t.match(body, { results: [{ id: 0, addResults: [{ success: true }] }] });
  await caughtUp(client, schema, url, token);
  polling = false;
  await poll;
  const { rows } = await client.query<{ parts: number }>(
    `SELECT ST_NumGeometries(shape) AS parts FROM ${schema}.parcels_parcels WHERE parcel_id = 'CRAFTED'`,
  );
  t.same(rows, [{ parts: 701 }], 'the row arrived, every ring a part of its own');
  t.ok(answers.length > 0 && answers.every((status) => status === 200), `/healthz answered ${answers.length} times meanwhile`);
  const encoded = logLines(geohook, 'mirror: rows encoded');
  t.ok(encoded.length > 0, 'the change batch was encoded by the row encoder');
  t.ok(
    encoded.every((line) => typeof line.threadId === 'number' && line.threadId !== 0),
    'on a worker thread, not the main thread (threadId 0) that answers deliveries',
  );
});

t.test(
  'issue 51: a polygon past the limits is refused and recorded for its layer once; the layer goes on when it is deleted',
  async (t) => {
    const { emulator, url, token, schema, client, env, geohook } = await setUp(t, 1);
    await caughtUp(client, schema, url, token);
    // A comb, each of its rings between two teeth tested against every tooth: more steps than the limit allows.
    const teeth = 4000;
    const comb = [[0, 0]];
    for (let tooth = 0; tooth < teeth; tooth += 1) comb.push([tooth * 4, 100], [tooth * 4 + 2, 100], [tooth * 4 + 2, 1]);
    comb.push([teeth * 4, 1], [teeth * 4, 0], [0, 0]);
    const rings = [comb, ...Array.from({ length: teeth - 1 }, (_, tooth) => ccwSquare(tooth * 4 + 2, 50))];
    const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', {
      edits: [{ id: 0, adds: [{ attributes: { parcel_id: 'COMB' }, geometry: { rings, spatialReference: { wkid: 102100 } } }] }],
    });
    const objectId = (body as { results: [{ addResults: [{ objectId: number }] }] }).results[0].addResults[0].objectId;
    const status = async () => {
      const run = await runCli(['mirror', 'status', '--json'], { env: { ...env, REDIS_URL: redis.url } });
      return (JSON.parse(run.stdout) as { layers: { layer: number; lastError: string | null }[] }).layers;
    };
    const refusal = 'mirror: a geometry was refused: the layers wait for the next edit';
    await waitFor('the refusal', async () => logLines(geohook, refusal).length > 0);
    const refused = (await status()).find((layer) => layer.layer === 0)?.lastError;
    t.match(refused, new RegExp(`^GEOHOOK_ERR_MIRROR_GEOMETRY_LIMIT: feature ${objectId}: geometry refused: grouping its rings`));
    await emulator.control('services/Hosted/Parcels.FeatureServer/applyEdits', { edits: [{ id: 0, deletes: [objectId] }] });
    await caughtUp(client, schema, url, token);
    t.same(
      (await status()).map((layer) => layer.lastError),
      [null, null],
      'the error is gone once the layer is brought up to date',
    );
    t.same(await differences(client, schema, url, token, 0, 'parcels_parcels'), []);
    t.equal(logLines(geohook, refusal).length, 1, 'refused once, not retried');
  },
);
