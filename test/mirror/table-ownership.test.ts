import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import pg from 'pg';
import t, { type Test } from 'tap';
import { layerGenerations, layerResource, mirrorDifferences, queryFeatures } from '../../harness/faults/mirror-audit.js';
import { defaultCatalog } from '../../src/emulator/catalog.js';
import { layerSchema } from '../../src/emulator/features/definition-schema.js';
import type { CatalogService } from '../../src/emulator/types.js';
import { prepareMirrorDatabase } from '../../src/mirror/mirror-database.js';
import { createStateStatements } from '../../src/mirror/table-ddl.js';
import { runCli } from '../helpers/cli.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook, type TestGeohook } from '../helpers/geohook.js';
import { startPostgres } from '../helpers/postgres.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

t.setTimeout(400_000);
// Issue 51 (security review 2, N1 and I4): layers whose names map to one PostgreSQL table.
const redis = await startRedis(t);
const postgres = await startPostgres(t);

/** A table (no geometry) with a text field `zone`, and `extra` fields. */
const zoneTable = (id: number, name: string, extra: string[] = []) =>
  layerSchema.parse({
    id,
    name,
    type: 'Table',
    fields: [
      { name: 'objectid', type: 'esriFieldTypeOID' },
      { name: 'globalid', type: 'esriFieldTypeGlobalID' },
      { name: 'zone', type: 'esriFieldTypeString' },
      ...extra.map((field) => ({ name: field, type: 'esriFieldTypeString' })),
    ],
  });

const tracked = (folderName: string, serviceName: string, layers: CatalogService['layers']): CatalogService => ({
  folderName,
  serviceName,
  type: 'FeatureServer',
  hosted: true,
  capabilities: 'Create,Delete,Query,Update,Editing,ChangeTracking',
  syncEnabled: false,
  ...(layers === undefined ? {} : { layers }),
});

/**
 * Services whose layers collide: `City` + "Zoning Parcels", `Hosted/City_Zoning` + "Parcels" and
 * `Archive/City_Zoning` + "Parcels"; "Lot Parcels" and "lot-parcels" in `Lots`; `City` + "Zoning Parcels Rebuild",
 * the name of `Hosted/City_Zoning`'s rebuild table; and `City` + "Streets", whose table someone else made first.
 */
const catalog: CatalogService[] = [
  ...defaultCatalog,
  tracked('Hosted', 'City_Zoning', [zoneTable(0, 'Parcels')]),
  tracked('Hosted', 'City', [
    zoneTable(0, 'Streets'),
    zoneTable(1, 'Zoning Parcels', ['injected']),
    zoneTable(2, 'Zoning Parcels Rebuild'),
  ]),
  tracked('Archive', 'City_Zoning', [zoneTable(0, 'Parcels')]),
  tracked('Hosted', 'Lots', [zoneTable(0, 'Lot Parcels'), zoneTable(1, 'lot-parcels')]),
];
const MIRRORED = ['Hosted/City_Zoning', 'Hosted/City', 'Archive/City_Zoning', 'Hosted/Lots'].map((name) => `${name}.FeatureServer`);

const serviceUrl = (emulator: TestEmulator, service: string): string =>
  `${emulator.url}/arcgis/rest/services/${service.replace(/\.FeatureServer$/, '')}/FeatureServer`;

async function add(emulator: TestEmulator, service: string, layer: number, rows: Record<string, unknown>[]): Promise<void> {
  const authentication = ApiKeyManager.fromKey(await emulator.token());
  await applyEdits({ url: `${serviceUrl(emulator, service)}/${layer}`, authentication, adds: rows.map((attributes) => ({ attributes })) });
}

interface StateRow {
  service: string;
  layer: number;
  table_name: string;
  server_gen: string;
}

async function statesOf(client: pg.Client, schema: string): Promise<StateRow[]> {
  const { rows } = await client
    .query<StateRow>(`SELECT service, layer, table_name, server_gen FROM ${schema}.mirror_state ORDER BY service, layer`)
    .catch(() => ({ rows: [] as StateRow[] }));
  return rows;
}

/** Resolves once `mirror_state` holds every layer of every mirrored service at the server's generation. */
async function caughtUp(client: pg.Client, schema: string, emulator: TestEmulator): Promise<StateRow[]> {
  const token = await emulator.token();
  return waitFor(
    'every mirrored layer at its generation',
    async () => {
      const states = await statesOf(client, schema);
      for (const service of MIRRORED) {
        const server = await layerGenerations(serviceUrl(emulator, service), token);
        const newest = Math.max(...server.values());
        const mine = states.filter((state) => state.service === service);
        if (mine.length !== server.size || mine.some((state) => Number(state.server_gen) !== newest)) return false;
      }
      return states;
    },
    { timeoutMs: 150_000 },
  );
}

/** Each mirrored layer whose table differs from the layer: `service#layer table: differences`. */
async function differing(client: pg.Client, schema: string, emulator: TestEmulator, states: StateRow[]): Promise<string[]> {
  const token = await emulator.token();
  const found: string[] = [];
  for (const state of states) {
    const url = serviceUrl(emulator, state.service);
    const layer = await layerResource(url, state.layer, token);
    const differences = await mirrorDifferences(
      client,
      { schema, table: state.table_name, layer },
      await queryFeatures(url, state.layer, token),
    );
    if (differences.length > 0) found.push(`${state.service}#${state.layer} ${state.table_name}: ${JSON.stringify(differences)}`);
  }
  return found;
}

const tablesOf = (states: StateRow[]): Record<string, string> =>
  Object.fromEntries(states.map((state) => [`${state.service}#${state.layer}`, state.table_name]));

let schemas = 0;

async function setUp(t: Test) {
  const emulator = await startEmulator(t, { catalog });
  schemas += 1;
  const schema = `owned_${schemas}`;
  const env = {
    ...registrationEnv(emulator, MIRRORED, uniquePrefix()),
    MIRROR: MIRRORED.join(','),
    MIRROR_DATABASE_URL: postgres.url,
    MIRROR_SCHEMA: schema,
  };
  const client = await postgres.connect(t);
  return { emulator, schema, env, client };
}

const startReady = async (t: Test, env: Record<string, string>): Promise<TestGeohook> => {
  const geohook = await startGeohook(t, redis, env);
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  return geohook;
};

t.test('layers whose names map to one table each get a table of their own, kept across restarts (issue 51)', async (t) => {
  const { emulator, schema, env, client } = await setUp(t);
  await add(emulator, 'Hosted/City_Zoning.FeatureServer', 0, [{ zone: 'R1-victim-row' }, { zone: 'C2-victim-row' }]);
  await add(emulator, 'Hosted/City.FeatureServer', 1, [{ zone: 'ATTACKER-ROW', injected: 'from Hosted/City' }]);
  await add(emulator, 'Hosted/City.FeatureServer', 0, [{ zone: 'street' }]);
  await add(emulator, 'Hosted/City.FeatureServer', 2, [{ zone: 'not to be dropped' }]);
  await add(emulator, 'Archive/City_Zoning.FeatureServer', 0, [{ zone: 'archived' }]);
  await add(emulator, 'Hosted/Lots.FeatureServer', 0, [{ zone: 'lot' }]);
  await add(emulator, 'Hosted/Lots.FeatureServer', 1, [{ zone: 'lot!' }, { zone: 'lot!!' }]);
  // A table geohook did not make, with the name City's "Streets" would get.
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.query(`CREATE TABLE ${schema}.city_streets (note text)`);
  await client.query(`INSERT INTO ${schema}.city_streets VALUES ('not geohook''s')`);

  const first = await startReady(t, env);
  const states = await caughtUp(client, schema, emulator);
  const tables = tablesOf(states);
  t.equal(new Set(Object.values(tables)).size, states.length, `one table per layer: ${JSON.stringify(tables)}`);
  t.same(await differing(client, schema, emulator, states), [], 'each table equals its own layer');
  t.same((await client.query(`SELECT note FROM ${schema}.city_streets`)).rows, [{ note: "not geohook's" }], 'the foreign table untouched');
  t.not(tables['Hosted/City.FeatureServer#0'], 'city_streets', 'the foreign table is not adopted');
  t.equal(tables['Hosted/City_Zoning.FeatureServer#0'], 'city_zoning_parcels', 'the first copied keeps the plain name');
  t.match(tables['Hosted/City.FeatureServer#1'], /^city_zoning_parcels_[0-9a-f]{8}$/, 'the second gets a name of its own');

  const status = await runCli(['mirror', 'status', '--json'], { env: { ...env, REDIS_URL: redis.url } });
  t.equal(status.code, 0, status.stderr);
  const listed = (JSON.parse(status.stdout) as { layers: { service: string; layer: number; table: string; rows: number }[] }).layers;
  t.same(
    Object.fromEntries(listed.map((layer) => [`${layer.service}#${layer.layer}`, layer.table])),
    Object.fromEntries(Object.entries(tables).map(([key, table]) => [key, `${schema}.${table}`])),
    'mirror status shows each layer’s own table',
  );
  t.match(
    listed.find((layer) => layer.service === 'Hosted/City_Zoning.FeatureServer'),
    { rows: 2 },
  );

  // Edits after the copy, then a restart: each layer keeps its table, and its edits land there.
  await add(emulator, 'Hosted/City_Zoning.FeatureServer', 0, [{ zone: 'victim-edit' }]);
  await add(emulator, 'Hosted/City.FeatureServer', 1, [{ zone: 'attacker-edit' }]);
  await t.resolveMatch(caughtUp(client, schema, emulator).then(tablesOf), tables);
  await first.stop();
  await startReady(t, env);
  await add(emulator, 'Hosted/Lots.FeatureServer', 1, [{ zone: 'after the restart' }]);
  await add(emulator, 'Archive/City_Zoning.FeatureServer', 0, [{ zone: 'after the restart' }]);
  const again = await caughtUp(client, schema, emulator);
  t.same(tablesOf(again), tables, 'the same tables after a restart');
  t.same(await differing(client, schema, emulator, again), [], 'each table still equals its own layer');

  // I4: Hosted/City_Zoning's rebuild table would be `city_zoning_parcels_rebuild`, City's "Zoning Parcels Rebuild".
  t.equal(tables['Hosted/City.FeatureServer#2'], 'city_zoning_parcels_rebuild');
  const rebuilt = await runCli(['mirror', 'rebuild', '--service', 'Hosted/City_Zoning.FeatureServer'], {
    env: { ...env, REDIS_URL: redis.url },
  });
  t.equal(rebuilt.code, 0, rebuilt.stderr);
  t.match(JSON.parse(rebuilt.stdout), { layers: [{ layer: 0, table: `${schema}.city_zoning_parcels`, copied: 3 }] });
  const afterRebuild = await statesOf(client, schema);
  t.same(tablesOf(afterRebuild), tables, 'a rebuild keeps every table’s name');
  t.same(await differing(client, schema, emulator, afterRebuild), [], 'the rebuild dropped no other layer’s table');
});

t.test('geohook processes copying colliding layers at once give each layer a table of its own', async (t) => {
  const { emulator, schema, env, client } = await setUp(t);
  for (const service of MIRRORED) await add(emulator, service, 0, [{ zone: service }]);
  await add(emulator, 'Hosted/City.FeatureServer', 1, [{ zone: 'city 1' }]);
  await add(emulator, 'Hosted/Lots.FeatureServer', 1, [{ zone: 'lots 1' }]);
  const mirrorOnly = Object.fromEntries(Object.entries(env).filter(([name]) => name !== 'REGISTER'));
  await Promise.all([startReady(t, env), startGeohook(t, redis, mirrorOnly), startGeohook(t, redis, mirrorOnly)]);
  const states = await caughtUp(client, schema, emulator);
  const tables = tablesOf(states);
  t.equal(new Set(Object.values(tables)).size, states.length, `one table per layer: ${JSON.stringify(tables)}`);
  t.same(await differing(client, schema, emulator, states), [], 'each table equals its own layer');
});

t.test(
  'an upgrade releases layers that earlier versions recorded with one table between them; a recorded table keeps its name',
  async (t) => {
    const client = await postgres.connect(t);
    const pool = new pg.Pool({ connectionString: postgres.url, max: 1 });
    t.teardown(() => pool.end());
    const schema = 'upgraded';
    for (const statement of createStateStatements(schema)) await client.query(statement);
    await client.query(
      `INSERT INTO ${schema}.mirror_state (service, layer, table_name, server_gen) VALUES
       ('Hosted/City_Zoning.FeatureServer', 0, 'city_zoning_parcels', 5), ('Hosted/City.FeatureServer', 1, 'city_zoning_parcels', 7),
       ('Hosted/City.FeatureServer', 0, 'city_streets', 7)`,
    );
    const released = await prepareMirrorDatabase(pool, schema);
    t.same(released.map(({ service, layer, table }) => `${service}#${layer} ${table}`).sort(), [
      'Hosted/City.FeatureServer#1 city_zoning_parcels',
      'Hosted/City_Zoning.FeatureServer#0 city_zoning_parcels',
    ]);
    t.same(tablesOf(await statesOf(client, schema)), { 'Hosted/City.FeatureServer#0': 'city_streets' });
    t.same(await prepareMirrorDatabase(pool, schema), [], 'once is enough');
    await t.rejects(
      client.query(
        `INSERT INTO ${schema}.mirror_state (service, layer, table_name, server_gen) VALUES ('Hosted/Other.FeatureServer', 0, 'city_streets', 1)`,
      ),
      { code: '23505' },
      'no two layers can record one table',
    );
  },
);
