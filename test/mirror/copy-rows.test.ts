import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import t from 'tap';
import { parcelsLayers } from '../../src/emulator/features/layer-schemas.js';
import type { MirrorLayer } from '../../src/mirror/column-types.js';
import { copyRows } from '../../src/mirror/copy-rows.js';
import { copyText } from '../../src/mirror/copy-text.js';
import type { EsriRow } from '../../src/mirror/row-values.js';
import { createStateStatements, createTableStatements } from '../../src/mirror/table-ddl.js';
import { startPostgres } from '../helpers/postgres.js';
import { square } from '../helpers/square.js';

const postgres = await startPostgres(t);
const [parcels, inspections] = parcelsLayers() as MirrorLayer[] as [MirrorLayer, MirrorLayer];
let schemas = 0;

async function freshTables(client: pg.Client): Promise<string> {
  schemas += 1;
  const schema = `copy_${schemas}`;
  const statements = [
    ...createStateStatements(schema),
    ...createTableStatements(schema, 'parcels_parcels', parcels),
    ...createTableStatements(schema, 'parcels_inspections', inspections),
  ];
  for (const statement of statements) await client.query(statement);
  return schema;
}

/** Strings COPY's text format must escape, or must not: each as a whole value and inside others. */
const AWKWARD = [
  'tab\there',
  'line\nbreak',
  'carriage\r\nreturn',
  'back\\slash',
  '\\N',
  '\\.',
  '\\',
  'it\'s "quoted", with, commas',
  '',
  ' leading and trailing ',
  'émoji 🗺️ and 中文 and עברית and e\u0301',
  '\u2028line separator\u2029',
  'null',
  'NULL',
  '\\t literally',
];

const guid = (): string => `{${randomUUID().toUpperCase()}}`;

function parcel(index: number): EsriRow {
  const x = (index % 100) * 100;
  const y = Math.floor(index / 100) * 100;
  return {
    attributes: {
      objectid: index + 1,
      globalid: guid(),
      parcel_id: `P-${index}`,
      owner: index % 17 === 0 ? null : `${AWKWARD[index % AWKWARD.length]}#${index}`,
      status: ['Open', 'Pending', 'Closed'][index % 3],
      area_sqm: index / 3,
      // BigInteger beyond 2^53: as change events carry it (a decimal string) and as the emulator keeps it (a bigint).
      assessed_value: index % 2 === 0 ? (9007199254740993n + BigInt(index)).toString() : -9223372036854775808n + BigInt(index),
      created_user: AWKWARD[(index + 3) % AWKWARD.length],
      created_date: 1_700_000_000_123 + index,
      last_edited_user: null,
      last_edited_date: index % 5 === 0 ? undefined : -86_400_000 * index,
    },
    geometry: square(x, y),
  };
}

t.test('10,000 parcels with awkward strings, BigInteger beyond 2^53 and dates: every value as written', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshTables(client);
  const rows = Array.from({ length: 10_000 }, (_, index) => parcel(index));
  const started = Date.now();
  const written = await copyRows(client, { schema, table: 'parcels_parcels', layer: parcels }, [rows]);
  t.equal(written, 10_000);
  t.comment(`COPY of 10,000 parcels: ${Date.now() - started} ms`);

  const { rows: stored } = await client.query<{
    objectid: string;
    globalid: string;
    parcel_id: string;
    owner: string | null;
    status: string;
    area_sqm: number;
    assessed_value: string;
    created_user: string;
    created_ms: string;
    last_edited_user: string | null;
    last_edited_ms: string | null;
    valid: boolean;
    wkt: string;
  }>(
    `SELECT objectid, globalid, parcel_id, owner, status, area_sqm, assessed_value, created_user, last_edited_user,
            (extract(epoch FROM created_date) * 1000)::bigint AS created_ms,
            (extract(epoch FROM last_edited_date) * 1000)::bigint AS last_edited_ms,
            ST_IsValid(shape) AS valid, ST_AsText(shape) AS wkt
     FROM ${schema}.parcels_parcels ORDER BY objectid`,
  );
  t.equal(stored.length, 10_000);
  const mismatches: string[] = [];
  stored.forEach((row, index) => {
    const { attributes } = rows[index]!;
    const x = (index % 100) * 100;
    const y = Math.floor(index / 100) * 100;
    const expected = {
      objectid: String(attributes.objectid),
      globalid: (attributes.globalid as string).slice(1, -1).toLowerCase(),
      parcel_id: attributes.parcel_id,
      owner: attributes.owner,
      status: attributes.status,
      area_sqm: attributes.area_sqm,
      assessed_value: String(attributes.assessed_value),
      created_user: attributes.created_user,
      created_ms: String(attributes.created_date),
      last_edited_user: null,
      last_edited_ms: attributes.last_edited_date === undefined ? null : String(attributes.last_edited_date),
      valid: true,
      wkt: `MULTIPOLYGON(((${x} ${y},${x + 50} ${y},${x + 50} ${y + 50},${x} ${y + 50},${x} ${y})))`,
    };
    for (const [name, value] of Object.entries(expected)) {
      if ((row as Record<string, unknown>)[name] !== value)
        mismatches.push(`row ${index} ${name}: ${JSON.stringify((row as Record<string, unknown>)[name])} != ${JSON.stringify(value)}`);
    }
  });
  t.same(mismatches.slice(0, 10), [], 'every value as written');
  t.equal(
    (await client.query(`SELECT count(*)::int AS n FROM ${schema}.parcels_parcels WHERE assessed_value > 9007199254740992`)).rows[0].n,
    5000,
  );
});

t.test('a table without geometry, DateOnly as date, from pages read one at a time', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshTables(client);
  const parent = guid();
  async function* inspectionsRows(): AsyncGenerator<EsriRow[]> {
    for (let index = 0; index < 3; index += 1) {
      yield [
        { attributes: { objectid: index + 1, globalid: guid(), parcel_guid: parent, inspected_on: `2024-02-2${7 + index}`, result: 'ok' } },
      ];
    }
  }
  t.equal(await copyRows(client, { schema, table: 'parcels_inspections', layer: inspections }, inspectionsRows()), 3);
  const { rows } = await client.query<{ day: string; parcel: string }>(
    `SELECT inspected_on::text AS day, parcel_guid::text AS parcel FROM ${schema}.parcels_inspections ORDER BY objectid`,
  );
  t.same(
    rows.map((row) => row.day),
    ['2024-02-27', '2024-02-28', '2024-02-29'],
  );
  t.equal(rows[0]!.parcel, parent.slice(1, -1).toLowerCase());
});

t.test('a bad row fails the whole COPY, and the client goes on working', async (t) => {
  const client = await postgres.connect(t);
  const schema = await freshTables(client);
  const target = { schema, table: 'parcels_parcels', layer: parcels };
  const good = Array.from({ length: 1200 }, (_, index) => parcel(index));
  await t.rejects(
    copyRows(client, target, [good, [{ attributes: { objectid: 99_999, globalid: guid() }, geometry: { x: 1, y: 2 } }]]),
    TypeError,
  );
  const nul = parcel(5000);
  nul.attributes.owner = 'a\0b';
  await t.rejects(copyRows(client, target, [good, [nul]]));
  t.equal((await client.query(`SELECT count(*)::int AS n FROM ${schema}.parcels_parcels`)).rows[0].n, 0, 'no row of either');
  t.equal(await copyRows(client, target, [good.slice(0, 10)]), 10);
});

t.test('the text format: NULL as \\N, backslash, tab, newline and carriage return escaped, the rest as it is', async (t) => {
  t.equal(copyText(null), '\\N');
  t.equal(copyText('\\N'), '\\\\N');
  t.equal(copyText('a\tb\nc\rd\\e'), 'a\\tb\\nc\\rd\\\\e');
  t.equal(copyText('"quoted", \'x\' 🗺️'), '"quoted", \'x\' 🗺️');
});
