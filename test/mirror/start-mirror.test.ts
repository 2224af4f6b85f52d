import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { Redis } from 'ioredis';
import t from 'tap';
import { mirrorGenerations, queryFeatures } from '../../harness/faults/mirror-audit.js';
import { mirrorErrorsKey } from '../../src/redis/keys.js';
import { runCli } from '../helpers/cli.js';
import { PARCELS } from '../helpers/edits.js';
import { caughtUp, DASHBOARD, differences, mirrorParcels } from '../helpers/mirror.js';
import { startPostgres } from '../helpers/postgres.js';
import { startRedis } from '../helpers/redis.js';
import { square } from '../helpers/square.js';
import { waitFor } from '../helpers/wait.js';

// Each test starts geohook, the emulator and PostgreSQL processes: past tap's 60 s beside the other test files.
t.setTimeout(180_000);

const redis = await startRedis(t);
const postgres = await startPostgres(t);
const setUp = (t: Parameters<typeof mirrorParcels>[0], parcels: number) => mirrorParcels(t, { redis, postgres }, parcels);

t.test('the initial copy, then adds, updates and deletes: each table equals its layer at the generation mirror_state says', async (t) => {
  const { geohook, url, token, authentication, schema, client, env } = await setUp(t, 45);
  await caughtUp(client, schema, url, token);
  const { rows } = await client.query<{ count: string }>(`SELECT count(*) FROM ${schema}.parcels_parcels`);
  t.equal(Number(rows[0]!.count), 45, 'every parcel copied');
  t.same(await differences(client, schema, url, token, 0, 'parcels_parcels'), [], 'the copy equals the layer');

  const added = await applyEdits({
    url: `${url}/0`,
    authentication,
    adds: [{ attributes: { parcel_id: 'NEW', status: 'Pending' }, geometry: square(5000, 5000) as never }],
    updates: [
      { attributes: { objectid: 1, owner: 'Ada', status: 'Closed' } },
      { attributes: { objectid: 2 }, geometry: square(7000, 7000, 10) as never },
    ],
    deletes: [3, 4],
  });
  t.equal(added.deleteResults.length, 2);
  await applyEdits({
    url: `${url}/1`,
    authentication,
    adds: [{ attributes: { parcel_guid: added.addResults[0]!.globalId, inspector: 'i7', result: 'pass', inspected_on: '2026-11-27' } }],
  });
  const gens = await caughtUp(client, schema, url, token);
  t.equal(gens.size, 2, 'both layers in mirror_state');
  t.same(await differences(client, schema, url, token, 0, 'parcels_parcels'), [], 'parcels equal the layer');
  t.same(await differences(client, schema, url, token, 1, 'parcels_inspections'), [], 'inspections equal the table');
  const moved = await client.query<{ owner: string; wkt: string; srid: number }>(
    `SELECT owner, ST_AsText(shape) AS wkt, ST_SRID(shape) AS srid FROM ${schema}.parcels_parcels WHERE objectid IN (1, 2) ORDER BY objectid`,
  );
  t.same(
    moved.rows.map((row) => [row.owner, row.srid]),
    [
      ['Ada', 3857],
      ['Owner 1', 3857],
    ],
  );
  t.equal(moved.rows[1]!.wkt, 'MULTIPOLYGON(((7000 7000,7010 7000,7010 7010,7000 7010,7000 7000)))');

  const status = await runCli(['mirror', 'status', '--json'], { env: { ...env, REDIS_URL: redis.url } });
  t.equal(status.code, 0, status.stderr);
  t.same(JSON.parse(status.stdout), {
    layers: [
      {
        service: PARCELS,
        layer: 0,
        table: `${schema}.parcels_parcels`,
        rows: 44,
        serverGen: gens.get(0),
        lagGens: 0,
        lagSeconds: 0,
        lastError: null,
      },
      {
        service: PARCELS,
        layer: 1,
        table: `${schema}.parcels_inspections`,
        rows: 1,
        serverGen: gens.get(1),
        lagGens: 0,
        lagSeconds: 0,
        lastError: null,
      },
    ],
  });

  const page = await (await fetch(`${geohook.url}/ui/services`, { headers: { authorization: `Bearer ${DASHBOARD}` } })).text();
  t.match(page, `<tr data-mirror="${PARCELS}#0">`, 'the services page shows the mirror');
  t.match(page, `<td data-column="table">${schema}.parcels_parcels</td><td data-column="rows">44</td>`);

  const metrics = await (await fetch(`${geohook.url}/metrics`)).text();
  t.match(metrics, `geohook_mirror_server_generation{service="${PARCELS}",layer="0"} ${gens.get(0)}`);
  t.match(metrics, `geohook_mirror_rows_written_total{service="${PARCELS}",kind="copied"} 45`);
  t.match(metrics, `geohook_mirror_rows_written_total{service="${PARCELS}",kind="deleted"} 2`);
});

t.test('a field added to the layer becomes a column, filled by the next edits', async (t) => {
  const { emulator, url, token, authentication, schema, client } = await setUp(t, 3);
  await caughtUp(client, schema, url, token);
  const answer = await emulator.admin('../rest/admin/services/Hosted/Parcels/FeatureServer/0/addToDefinition', {
    addToDefinition: JSON.stringify({ fields: [{ name: 'zoning', type: 'esriFieldTypeString', length: 8 }] }),
  });
  t.same(answer, { success: true });
  await applyEdits({ url: `${url}/0`, authentication, updates: [{ attributes: { objectid: 2, zoning: 'R1' } }] });
  await caughtUp(client, schema, url, token);
  const { rows } = await client.query<{ objectid: string; zoning: string | null }>(
    `SELECT objectid, zoning FROM ${schema}.parcels_parcels ORDER BY objectid`,
  );
  t.same(
    rows.map((row) => [row.objectid, row.zoning]),
    [
      ['1', null],
      ['2', 'R1'],
      ['3', null],
    ],
  );
  t.same(await differences(client, schema, url, token, 0, 'parcels_parcels'), []);
});

t.test('a sync that keeps failing is tried again after a growing wait, its cause said once, and recovers', async (t) => {
  const { geohook, url, token, authentication, schema, client, env } = await setUp(t, 3);
  await caughtUp(client, schema, url, token);
  // A table changed by hand so that the next range cannot be written: the same failure at every try.
  await client.query(`ALTER TABLE ${schema}.parcels_parcels ADD CONSTRAINT not_closed CHECK (status <> 'Closed') NOT VALID`);
  await applyEdits({ url: `${url}/0`, authentication, updates: [{ attributes: { objectid: 1, status: 'Closed' } }] });
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  const tries = new Set<string>();
  await waitFor('three failed tries', async () => {
    const error = await raw.hget(mirrorErrorsKey((env as Record<string, string>).GEOHOOK_PREFIX!), `${PARCELS}#0`);
    if (error !== null) tries.add((JSON.parse(error) as { at: string }).at);
    return tries.size >= 3;
  });
  const said = geohook
    .log()
    .split('\n')
    .filter((line) => line.includes('could not be brought up to date'));
  t.equal(said.length, 1, 'three tries, one line naming the cause');
  t.match(said[0], /not_closed/);
  await client.query(`ALTER TABLE ${schema}.parcels_parcels DROP CONSTRAINT not_closed`);
  await caughtUp(client, schema, url, token);
  await waitFor('the recovery line', async () => geohook.log().includes('the layers are brought up to date again'));
  t.same(await differences(client, schema, url, token, 0, 'parcels_parcels'), []);
});

t.test('ST_Intersects with an envelope finds the features query finds with that envelope', async (t) => {
  const { url, token, schema, client } = await setUp(t, 60);
  await caughtUp(client, schema, url, token);
  const envelope = { xmin: 120, ymin: 80, xmax: 430, ymax: 260 };
  const queried = await queryFeatures(url, 0, token, {
    geometry: JSON.stringify({ ...envelope, spatialReference: { wkid: 102100 } }),
    geometryType: 'esriGeometryEnvelope',
    spatialRel: 'esriSpatialRelIntersects',
  });
  const { rows } = await client.query<{ objectid: string }>(
    `SELECT objectid FROM ${schema}.parcels_parcels WHERE ST_Intersects(shape, ST_MakeEnvelope($1, $2, $3, $4, 3857)) ORDER BY objectid`,
    [envelope.xmin, envelope.ymin, envelope.xmax, envelope.ymax],
  );
  t.ok(queried.length > 0 && queried.length < 60, `${queried.length} of 60 parcels in the envelope`);
  t.same(
    rows.map((row) => Number(row.objectid)),
    queried.map((feature) => feature.attributes.objectid),
  );
});

t.test('geohook mirror rebuild makes a table changed by hand its layer again, in a new table swapped in', async (t) => {
  const { url, token, schema, client, env } = await setUp(t, 12);
  const gens = await caughtUp(client, schema, url, token);
  for (const round of [1, 2]) {
    await client.query(`UPDATE ${schema}.parcels_parcels SET owner = 'tampered' WHERE objectid = 1`);
    await client.query(`DELETE FROM ${schema}.parcels_parcels WHERE objectid = 2`);
    t.same(
      (await differences(client, schema, url, token, 0, 'parcels_parcels')).map(({ kind }) => kind).sort(),
      ['changed', 'missing'],
      `round ${round}: the table differs from the layer`,
    );
    const rebuilt = await runCli(['mirror', 'rebuild', '--service', PARCELS], { env: { ...env, REDIS_URL: redis.url } });
    t.equal(rebuilt.code, 0, rebuilt.stderr);
    t.match(JSON.parse(rebuilt.stdout), {
      layers: [
        { service: PARCELS, layer: 0, table: `${schema}.parcels_parcels`, serverGen: gens.get(0), copied: 12 },
        { service: PARCELS, layer: 1, table: `${schema}.parcels_inspections`, serverGen: gens.get(1), copied: 0 },
      ],
    });
    t.same(await differences(client, schema, url, token, 0, 'parcels_parcels'), [], `round ${round}: the layer again`);
    const { rows } = await client.query<{ tablename: string; indexname: string }>(
      'SELECT tablename, indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
      [schema],
    );
    t.same(
      rows.map((row) => `${row.tablename} ${row.indexname}`),
      [
        'parcels_inspections parcels_inspections_pkey',
        'parcels_parcels parcels_parcels_pkey',
        'parcels_parcels parcels_parcels_shape_gist',
        'mirror_state mirror_state_pkey',
        'mirror_state mirror_state_table_name_idx',
      ].sort((a, b) => a.split(' ')[1]!.localeCompare(b.split(' ')[1]!)),
      `round ${round}: one table per layer, with its index and key under their names`,
    );
  }
  t.same(await mirrorGenerations(client, schema, PARCELS), gens);
});
