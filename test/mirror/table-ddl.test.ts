import pg from 'pg';
import t from 'tap';
import { parcelsLayers, roadsLayers } from '../../src/emulator/features/layer-schemas.js';
import { columnTypeOf, quoteIdentifier, tableNameOf, type MirrorLayer } from '../../src/mirror/column-types.js';
import {
  addColumnStatement,
  createStateStatements,
  createTableStatements,
  gistIndexNameOf,
  keyFieldOf,
  tableIndexStatements,
} from '../../src/mirror/table-ddl.js';
import { startPostgres } from '../helpers/postgres.js';

const postgres = await startPostgres(t);
let schemas = 0;

/** A fresh schema with its mirror_state, for one test. */
async function freshSchema(client: pg.Client): Promise<string> {
  schemas += 1;
  const schema = `ddl_${schemas}`;
  for (const statement of createStateStatements(schema)) await client.query(statement);
  return schema;
}

async function create(client: pg.Client, schema: string, table: string, layer: MirrorLayer): Promise<void> {
  for (const statement of createTableStatements(schema, table, layer)) await client.query(statement);
}

/** Each column of a table with its type as PostgreSQL prints it (format_type: `geometry(MultiPolygon,3857)`). */
async function columnsOf(client: pg.Client, schema: string, table: string): Promise<Record<string, string>> {
  const { rows } = await client.query<{ name: string; type: string }>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a
     WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [`${quoteIdentifier(schema)}.${quoteIdentifier(table)}`],
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.type]));
}

async function primaryKeyOf(client: pg.Client, schema: string, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
     WHERE i.indrelid = $1::regclass AND i.indisprimary`,
    [`${quoteIdentifier(schema)}.${quoteIdentifier(table)}`],
  );
  return rows.map((row) => row.name);
}

async function gistIndexes(client: pg.Client, schema: string, table: string): Promise<string[]> {
  const { rows } = await client.query<{ def: string }>('SELECT indexdef AS def FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [
    schema,
    table,
  ]);
  return rows.map((row) => row.def).filter((def) => /USING gist/.test(def));
}

const layers: MirrorLayer[] = [...parcelsLayers(), ...roadsLayers()];
const [parcels, inspections, roads] = layers as [MirrorLayer, MirrorLayer, MirrorLayer];

t.test('the Parcels layer: a column per field in its PostgreSQL type, shape MultiPolygon in 3857, GiST index, GlobalID key', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await create(client, schema, 'parcels_parcels', parcels);
  t.same(await columnsOf(client, schema, 'parcels_parcels'), {
    objectid: 'bigint',
    globalid: 'uuid',
    parcel_id: 'text',
    owner: 'text',
    status: 'text',
    area_sqm: 'double precision',
    assessed_value: 'bigint',
    created_user: 'text',
    created_date: 'timestamp with time zone',
    last_edited_user: 'text',
    last_edited_date: 'timestamp with time zone',
    shape: 'geometry(MultiPolygon,3857)',
  });
  t.same(await primaryKeyOf(client, schema, 'parcels_parcels'), ['globalid']);
  const gist = await gistIndexes(client, schema, 'parcels_parcels');
  t.equal(gist.length, 1);
  t.match(gist[0], /\(shape\)/);
});

t.test('the Inspections table: GUID as uuid, DateOnly as date, no geometry column', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await create(client, schema, 'parcels_inspections', inspections);
  t.same(await columnsOf(client, schema, 'parcels_inspections'), {
    objectid: 'bigint',
    globalid: 'uuid',
    parcel_guid: 'uuid',
    inspector: 'text',
    result: 'text',
    inspected_on: 'date',
    created_user: 'text',
    created_date: 'timestamp with time zone',
    last_edited_user: 'text',
    last_edited_date: 'timestamp with time zone',
  });
  t.same(await gistIndexes(client, schema, 'parcels_inspections'), []);
});

t.test('the Roads layer: SmallInteger as smallint, shape MultiLineString in 4326', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await create(client, schema, 'roads_roads', roads);
  const columns = await columnsOf(client, schema, 'roads_roads');
  t.equal(columns.lanes, 'smallint');
  t.equal(columns.shape, 'geometry(MultiLineString,4326)');
});

t.test('creating the tables again changes nothing', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await create(client, schema, 'parcels_parcels', parcels);
  await client.query(`INSERT INTO ${schema}.parcels_parcels (objectid, globalid) VALUES (1, gen_random_uuid())`);
  await create(client, schema, 'parcels_parcels', parcels);
  for (const statement of createStateStatements(schema)) await client.query(statement);
  t.equal((await client.query(`SELECT count(*)::int AS n FROM ${schema}.parcels_parcels`)).rows[0].n, 1);
});

t.test('a table made without indexes gets the same key and GiST index once its rows are in', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  for (const statement of createTableStatements(schema, 'parcels_parcels', parcels, { indexes: false })) await client.query(statement);
  for (const statement of createTableStatements(schema, 'parcels_inspections', inspections, { indexes: false }))
    await client.query(statement);
  t.same(await primaryKeyOf(client, schema, 'parcels_parcels'), [], 'no key yet');
  t.same(await gistIndexes(client, schema, 'parcels_parcels'), [], 'no index yet');
  await client.query(`INSERT INTO ${schema}.parcels_parcels (objectid, globalid) VALUES (1, gen_random_uuid())`);
  for (const statement of tableIndexStatements(schema, 'parcels_parcels', parcels)) await client.query(statement);
  for (const statement of tableIndexStatements(schema, 'parcels_inspections', inspections)) await client.query(statement);
  t.same(await primaryKeyOf(client, schema, 'parcels_parcels'), ['globalid']);
  t.match(await gistIndexes(client, schema, 'parcels_parcels'), [/parcels_parcels_shape_gist .*\(shape\)/]);
  t.same(await primaryKeyOf(client, schema, 'parcels_inspections'), ['globalid']);
  t.same(await gistIndexes(client, schema, 'parcels_inspections'), [], 'a table has no geometry to index');
  const { rows } = await client.query<{ name: string }>(
    "SELECT conname AS name FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'",
    [`${schema}.parcels_parcels`],
  );
  t.same(rows, [{ name: 'parcels_parcels_pkey' }], 'the key has the name an inline one gets');
});

t.test('every other ArcGIS type, z and m, and a layer without GlobalID keyed by its object id', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  const layer: MirrorLayer = {
    name: 'Gauges',
    objectIdField: 'OBJECTID',
    geometryType: 'esriGeometryMultipoint',
    spatialReference: { wkid: 2193 },
    hasZ: true,
    hasM: true,
    fields: [
      { name: 'OBJECTID', type: 'esriFieldTypeOID' },
      { name: 'reading', type: 'esriFieldTypeSingle' },
      { name: 'count', type: 'esriFieldTypeInteger' },
      { name: 'at', type: 'esriFieldTypeTimeOnly' },
      { name: 'stamped', type: 'esriFieldTypeTimestampOffset' },
      { name: 'notes', type: 'esriFieldTypeXML' },
      { name: 'photo', type: 'esriFieldTypeBlob' },
      { name: 'Shape', type: 'esriFieldTypeGeometry' },
    ],
  };
  t.equal(keyFieldOf(layer).name, 'OBJECTID');
  await create(client, schema, 'gauges', layer);
  t.same(await columnsOf(client, schema, 'gauges'), {
    OBJECTID: 'bigint',
    reading: 'real',
    count: 'integer',
    at: 'time without time zone',
    stamped: 'timestamp with time zone',
    notes: 'text',
    shape: 'geometry(MultiPointZM,2193)',
  });
  t.same(await primaryKeyOf(client, schema, 'gauges'), ['OBJECTID']);
});

t.test('Web Mercator under any of its Esri codes is stored as 3857; points stay points', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  for (const wkid of [102100, 102113, 900913]) {
    const layer: MirrorLayer = {
      name: `p${wkid}`,
      objectIdField: 'oid',
      geometryType: 'esriGeometryPoint',
      spatialReference: { wkid },
      fields: [{ name: 'oid', type: 'esriFieldTypeOID' }],
    };
    await create(client, schema, layer.name, layer);
    t.equal((await columnsOf(client, schema, layer.name)).shape, 'geometry(Point,3857)', `wkid ${wkid}`);
  }
});

t.test('names that are not plain identifiers are quoted: quotes, spaces, case, SQL', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  const hostile = `x"); DROP TABLE ${schema}.mirror_state; --`;
  const layer: MirrorLayer = {
    name: 'odd',
    objectIdField: 'Object ID',
    fields: [
      { name: 'Object ID', type: 'esriFieldTypeOID' },
      { name: hostile, type: 'esriFieldTypeString' },
      { name: 'Ünïcode "quoted"', type: 'esriFieldTypeDouble' },
    ],
  };
  const table = 'Table "with" quotes';
  await create(client, schema, table, layer);
  t.same(Object.keys(await columnsOf(client, schema, table)), ['Object ID', hostile, 'Ünïcode "quoted"']);
  t.equal((await client.query(`SELECT to_regclass('${schema}.mirror_state') IS NOT NULL AS present`)).rows[0].present, true);
  t.throws(() => quoteIdentifier('a\0b'), TypeError);
  t.throws(() => quoteIdentifier(''), TypeError);
});

t.test('a field added to the layer becomes a column, once; a field without a column type adds none', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await create(client, schema, 'roads_roads', roads);
  const statement = addColumnStatement(schema, 'roads_roads', { name: 'surface', type: 'esriFieldTypeString' });
  t.ok(statement);
  await client.query(statement!);
  await client.query(statement!);
  t.equal((await columnsOf(client, schema, 'roads_roads')).surface, 'text');
  t.equal(addColumnStatement(schema, 'roads_roads', { name: 'raster', type: 'esriFieldTypeRaster' }), undefined);
});

t.test('a feature layer with a field named shape is refused rather than losing a column', async (t) => {
  t.throws(
    () =>
      createTableStatements('s', 't', {
        ...roads,
        fields: [...roads.fields, { name: 'shape', type: 'esriFieldTypeString' }],
      }),
    TypeError,
  );
  t.throws(() => keyFieldOf({ name: 'n', objectIdField: 'oid', fields: [] }), TypeError);
  t.throws(() => createTableStatements('s', 't', { ...roads, geometryType: 'esriGeometryEnvelope' }), TypeError);
});

t.test('column types of ArcGIS types', async (t) => {
  t.equal(columnTypeOf('esriFieldTypeBigInteger'), 'bigint');
  t.equal(columnTypeOf('esriFieldTypeDate'), 'timestamptz');
  t.equal(columnTypeOf('esriFieldTypeGeometry'), undefined);
  t.equal(columnTypeOf('toString'), undefined, 'not an inherited property');
});

t.test('table names: <service>_<layer> in lower case, folder dropped, other characters as _, at most 63 bytes and distinct', async (t) => {
  t.equal(tableNameOf('Hosted/Parcels', 'Parcels'), 'parcels_parcels');
  t.equal(tableNameOf('Hosted/Parcels', 'Inspections'), 'parcels_inspections');
  t.equal(tableNameOf('Roads', 'Road Centre-lines'), 'roads_road_centre_lines');
  const long = tableNameOf('Hosted/Service', 'é'.repeat(40) + 'a');
  const other = tableNameOf('Hosted/Service', 'é'.repeat(40) + 'b');
  t.ok(Buffer.byteLength(long) <= 63);
  t.not(long, other);
});

t.test('two tables whose names share their first 50 characters get a GiST index each', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  const long = 'parcels_and_inspections_authoritative_county_wide_parcels';
  const tables = [`${long}_2024`, `${long}_2025`];
  t.equal(gistIndexNameOf('parcels_parcels'), 'parcels_parcels_shape_gist', 'a short name as it is');
  t.not(gistIndexNameOf(tables[0]!), gistIndexNameOf(tables[1]!));
  t.ok(
    tables.every((table) => Buffer.byteLength(gistIndexNameOf(table)) <= 63),
    'each fits 63 bytes',
  );
  for (const table of tables) await create(client, schema, table, parcels);
  for (const table of tables) t.match(await gistIndexes(client, schema, table), [/USING gist \(shape\)/], `${table} has its index`);
});

t.test('the throwaway cluster has PostGIS and listens on 127.0.0.1 only', async (t) => {
  const client = await postgres.connect(t);
  const { rows } = await client.query<{ postgis: string; listen: string; fsync: string }>(
    "SELECT postgis_lib_version() AS postgis, current_setting('listen_addresses') AS listen, current_setting('fsync') AS fsync",
  );
  t.match(rows[0]?.postgis, /^3\./);
  t.equal(rows[0]?.listen, '127.0.0.1');
  t.equal(rows[0]?.fsync, 'off');
  t.match(postgres.url, new RegExp(`^postgres://geohook:[^@]+@127\\.0\\.0\\.1:${postgres.port}/geohook$`));
});

t.test('a client without the password is refused', async (t) => {
  const client = new pg.Client({ connectionString: `postgres://postgres:wrong@127.0.0.1:${postgres.port}/geohook` });
  await t.rejects(client.connect(), { code: '28P01' });
});
