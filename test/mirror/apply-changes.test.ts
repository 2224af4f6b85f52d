import pg from 'pg';
import t from 'tap';
import { changeTypeOf, type ChangeEvent, type ChangeOp } from '../../src/changes/change-event.js';
import { parcelsLayers, roadsLayers } from '../../src/emulator/features/layer-schemas.js';
import { writeChanges, type WrittenRows } from '../../src/mirror/apply-changes.js';
import type { LayerTable, MirrorLayer } from '../../src/mirror/column-types.js';
import { ensureLayerTable, inLockedTransaction } from '../../src/mirror/mirror-database.js';
import { writeState } from '../../src/mirror/mirror-state.js';
import { createStateStatements, createTableStatements } from '../../src/mirror/table-ddl.js';
import { startPostgres } from '../helpers/postgres.js';

const postgres = await startPostgres(t);
const pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
t.teardown(() => pool.end());
const layers: MirrorLayer[] = [...parcelsLayers(), ...roadsLayers()];
const [parcels, inspections, roads] = layers as [MirrorLayer, MirrorLayer, MirrorLayer];
const SERVICE = 'Hosted/Parcels.FeatureServer';
let schemas = 0;
let events = 0;

async function freshSchema(client: pg.Client): Promise<string> {
  schemas += 1;
  const schema = `apply_${schemas}`;
  const statements = [
    ...createStateStatements(schema),
    ...createTableStatements(schema, 'parcels_parcels', parcels),
    ...createTableStatements(schema, 'parcels_inspections', inspections),
  ];
  for (const statement of statements) await client.query(statement);
  return schema;
}

const gid = (n: number): string => `{${n.toString(16).padStart(8, '0').toUpperCase()}-0000-4000-8000-000000000000}`;
const square = (x: number) => ({
  rings: [
    [
      [x, 0],
      [x, 10],
      [x + 10, 10],
      [x + 10, 0],
      [x, 0],
    ],
  ],
});

/** A change event of a parcel, as the resolver makes it (only what the mirror reads matters). */
function change(
  op: ChangeOp,
  n: number,
  attributes: Record<string, unknown> = {},
  key: ChangeEvent['key'] = { objectId: n, globalId: gid(n) },
): ChangeEvent {
  events += 1;
  return {
    id: `event-${events}`,
    type: changeTypeOf(op),
    op,
    hook: 'test',
    service: { serviceName: 'Hosted/Parcels', serviceType: 'FeatureServer', url: 'http://127.0.0.1/x' },
    layer: { id: 0, name: 'Parcels' },
    key,
    after: op === 'd' ? null : { attributes: { objectid: n, globalid: gid(n), ...attributes }, geometry: square(n * 20) },
    source: { origin: 'webhook', serverGens: [0, 1], transaction: { id: 't', index: 0, total: 1 } },
    ts: new Date(0).toISOString(),
  };
}

/** A layer's batch of change events, and the generation its table equals once they are written. */
interface Batch extends LayerTable {
  layerId: number;
  events: ChangeEvent[];
  serverGen: number;
}

const batch = (schema: string, serverGen: number, list: ChangeEvent[]): Batch => ({
  schema,
  table: 'parcels_parcels',
  layer: parcels,
  layerId: 0,
  events: list,
  serverGen,
});

/**
 * Writes a batch as a sync writes a range (sync-scope.ts): in one transaction holding the scope's lock, the
 * columns of fields the layer gained added, the rows, and the generation in `mirror_state`.
 */
async function applyBatch(target: Batch): Promise<WrittenRows | undefined> {
  return inLockedTransaction(pool, `${target.schema}\ntest`, async (client) => {
    await ensureLayerTable(client, target);
    const written = await writeChanges(client, target, target.events);
    await writeState(client, target.schema, { service: SERVICE, layer: target.layerId, table: target.table, serverGen: target.serverGen });
    return written;
  });
}

/** The whole table as text, row by row: what "the same table" means. */
async function dump(client: pg.Client, schema: string, table = 'parcels_parcels'): Promise<string[]> {
  const { rows } = await client.query<{ row: string }>(`SELECT to_jsonb(p)::text AS row FROM ${schema}.${table} AS p ORDER BY objectid`);
  return rows.map((row) => row.row);
}

async function stateOf(client: pg.Client, schema: string): Promise<string[]> {
  const { rows } = await client.query<{ service: string; layer: number; table_name: string; server_gen: string }>(
    `SELECT service, layer, table_name, server_gen FROM ${schema}.mirror_state ORDER BY service, layer`,
  );
  return rows.map((row) => `${row.service}/${row.layer} ${row.table_name} @${row.server_gen}`);
}

t.test('creates, updates and deletes land in one transaction with the generation in mirror_state', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  const first = await applyBatch(batch(schema, 5, [change('c', 1, { owner: 'Ann' }), change('c', 2, { owner: 'Bob' }), change('c', 3)]));
  t.same(first, { upserted: 3, deleted: 0 });
  const second = await applyBatch(
    batch(schema, 7, [change('u', 1, { owner: 'Ann B.' }), change('d', 2), change('r', 4, { status: 'Open' })]),
  );
  t.same(second, { upserted: 2, deleted: 1 });
  const { rows } = await client.query<{ objectid: string; owner: string | null; status: string | null; wkt: string }>(
    `SELECT objectid, owner, status, ST_AsText(shape) AS wkt FROM ${schema}.parcels_parcels ORDER BY objectid`,
  );
  t.same(
    rows.map((row) => [row.objectid, row.owner, row.status]),
    [
      ['1', 'Ann B.', null],
      ['3', null, null],
      ['4', null, 'Open'],
    ],
  );
  t.equal(rows[2]!.wkt, 'MULTIPOLYGON(((80 0,90 0,90 10,80 10,80 0)))');
  t.same(await stateOf(client, schema), [`${SERVICE}/0 parcels_parcels @7`]);
});

t.test('the same batch applied twice leaves the same table', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await applyBatch(batch(schema, 3, [change('c', 1), change('c', 2), change('c', 3)]));
  const again = batch(schema, 9, [change('u', 1, { owner: 'x', area_sqm: 1.5 }), change('d', 2), change('c', 5, { owner: 'y' })]);
  await applyBatch(again);
  const once = await dump(client, schema);
  t.same(await applyBatch(again), { upserted: 2, deleted: 0 });
  t.same(await dump(client, schema), once);
  t.equal(once.length, 3);
  t.same(await stateOf(client, schema), [`${SERVICE}/0 parcels_parcels @9`]);
});

t.test('a failing batch changes nothing, not even mirror_state, and the client goes on', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await applyBatch(batch(schema, 2, [change('c', 1, { owner: 'kept' })]));
  const before = await dump(client, schema);
  const badGeometry = change('c', 3);
  badGeometry.after!.geometry = { paths: [] };
  await t.rejects(applyBatch(batch(schema, 4, [change('d', 1), badGeometry])), TypeError);
  // Refused by PostgreSQL itself, after the delete ran in the transaction.
  await t.rejects(applyBatch(batch(schema, 4, [change('d', 1), change('c', 2, { assessed_value: '99999999999999999999' })])), {
    code: '22003',
  });
  t.same(await dump(client, schema), before);
  t.same(await stateOf(client, schema), [`${SERVICE}/0 parcels_parcels @2`]);
  t.same(await applyBatch(batch(schema, 4, [change('d', 1)])), { upserted: 0, deleted: 1 });
});

t.test('a feature changed several times in one batch ends as its last change says', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await applyBatch(
    batch(schema, 1, [
      change('c', 1),
      change('u', 1, { owner: 'second' }),
      change('c', 2),
      change('d', 2),
      change('d', 3),
      change('c', 3, { owner: 'back' }),
    ]),
  );
  t.same((await client.query(`SELECT objectid, owner FROM ${schema}.parcels_parcels ORDER BY objectid`)).rows, [
    { objectid: '1', owner: 'second' },
    { objectid: '3', owner: 'back' },
  ]);
});

t.test('a delete that carries only the object id removes the row of a layer keyed by GlobalID', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await applyBatch(batch(schema, 1, [change('c', 1), change('c', 2)]));
  t.same(await applyBatch(batch(schema, 2, [change('d', 1, {}, { objectId: 1 })])), { upserted: 0, deleted: 1 });
  t.same((await client.query(`SELECT objectid FROM ${schema}.parcels_parcels`)).rows, [{ objectid: '2' }]);
});

t.test('BigInteger beyond 2^53, Date and DateOnly values are stored exactly', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await applyBatch(
    batch(schema, 1, [
      change('c', 1, { assessed_value: '9007199254740993', last_edited_date: 1_709_164_800_123 }),
      change('c', 2, { assessed_value: -9223372036854775808n, last_edited_date: -1 }),
    ]),
  );
  const { rows } = await client.query<{ value: string; edited: string }>(
    `SELECT assessed_value::text AS value, to_char(last_edited_date AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS edited
     FROM ${schema}.parcels_parcels ORDER BY objectid`,
  );
  t.same(rows, [
    { value: '9007199254740993', edited: '2024-02-29T00:00:00.123' },
    { value: '-9223372036854775808', edited: '1969-12-31T23:59:59.999' },
  ]);

  const inspection = change('c', 7, {});
  inspection.after = { attributes: { objectid: 7, globalid: gid(7), parcel_guid: gid(1), inspected_on: '2024-02-29' } };
  await applyBatch({ ...batch(schema, 1, [inspection]), table: 'parcels_inspections', layer: inspections, layerId: 1 });
  t.same((await client.query(`SELECT inspected_on::text AS day, parcel_guid::text AS parent FROM ${schema}.parcels_inspections`)).rows, [
    { day: '2024-02-29', parent: '00000001-0000-4000-8000-000000000000' },
  ]);
  t.same(await stateOf(client, schema), [`${SERVICE}/0 parcels_parcels @1`, `${SERVICE}/1 parcels_inspections @1`]);
});

t.test('a layer without GlobalID is keyed by its object id', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  const { globalIdField: _withoutGlobalId, ...rest } = roads;
  const layer: MirrorLayer = { ...rest, fields: roads.fields.filter((field) => field.name !== 'globalid') };
  for (const statement of createTableStatements(schema, 'roads_roads', layer)) await client.query(statement);
  const road = (op: ChangeOp, n: number, lanes: number): ChangeEvent => ({
    ...change(op, n, {}, { objectId: n }),
    after:
      op === 'd'
        ? null
        : {
            attributes: { objectid: n, name: `road ${n}`, lanes },
            geometry: {
              paths: [
                [
                  [0, n],
                  [1, n],
                ],
              ],
            },
          },
  });
  const roadBatch = (gen: number, list: ChangeEvent[]): Batch => ({
    ...batch(schema, gen, list),
    table: 'roads_roads',
    layer,
    layerId: 0,
  });
  await applyBatch(roadBatch(1, [road('c', 1, 2), road('c', 2, 4)]));
  await applyBatch(roadBatch(2, [road('u', 1, 3), road('d', 2, 0)]));
  t.same((await client.query(`SELECT objectid, lanes, ST_AsText(shape) AS wkt FROM ${schema}.roads_roads`)).rows, [
    { objectid: '1', lanes: 3, wkt: 'MULTILINESTRING((0 1,1 1))' },
  ]);
});

t.test('a field added to the layer gets its column, and the next changes fill it', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshSchema(client);
  await applyBatch(batch(schema, 1, [change('c', 1)]));
  const grown: MirrorLayer = {
    ...parcels,
    fields: [...parcels.fields, { name: 'zoning', type: 'esriFieldTypeString' }, { name: 'scan', type: 'esriFieldTypeRaster' }],
  };
  await applyBatch({ ...batch(schema, 2, [change('u', 1, { zoning: 'R1' })]), layer: grown });
  t.same((await client.query(`SELECT zoning FROM ${schema}.parcels_parcels`)).rows, [{ zoning: 'R1' }]);
  const { rows } = await client.query<{ column_name: string }>(
    "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'parcels_parcels' AND column_name IN ('zoning', 'scan')",
    [schema],
  );
  t.same(rows, [{ column_name: 'zoning' }], 'a field without a column type gets none');
});
