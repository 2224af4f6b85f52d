import { execFile } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import t from 'tap';
import { startPostgresServer } from '../../src/embedded/postgres-server.js';
import { startPostgres } from '../helpers/postgres.js';

// One cluster for the file; the last test turns it into a cluster of an earlier geohook and starts it again.
const database = await startPostgres(t);
const { dir } = database;
const superuserUrl = (db: string): string =>
  `postgres://postgres:${encodeURIComponent(readFileSync(join(dir, 'password'), 'utf8').trim())}@127.0.0.1:${database.port}/${db}`;

/** Runs `psql -c sql` with `args`, no password file and no prompt: resolves to its output, rejects when it fails. */
async function psql(args: string[], sql: string, env: Record<string, string> = {}): Promise<string> {
  const options = { env: { PATH: process.env.PATH ?? '', PGPASSFILE: join(dir, 'none'), ...env }, timeout: 30_000 };
  return (await promisify(execFile)('psql', [...args, '-w', '-X', '-Atc', sql], options)).stdout.trim();
}

/** As the superuser: `statements` in the database `db`. */
async function asSuperuser(db: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: superuserUrl(db) });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

t.test('issue 51: the role of the URL is no superuser, owns the database geohook, and may not run a program', async (t) => {
  const client = await database.connect(t);
  const { rows } = await client.query<{ role: string; superuser: boolean; owner: string }>(
    `SELECT current_user AS role, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
       (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()) AS owner`,
  );
  t.same(rows, [{ role: 'geohook', superuser: false, owner: 'geohook' }]);
  const copy = await client.query("COPY (SELECT 1) TO PROGRAM 'true'").catch((err: unknown) => err);
  t.equal((copy as { code?: string }).code, '42501', 'COPY … TO PROGRAM: permission denied');
  await client.query('CREATE SCHEMA made_by_the_role');
  await client.query('CREATE TABLE made_by_the_role.shapes (id integer PRIMARY KEY, shape geometry(Point, 3857))');
  t.pass('the role makes schemas and PostGIS tables');
});

t.test('issue 51: the password file signs psql in as the role, without a password on the command line', async (t) => {
  t.equal(statSync(database.server.passwordFile).mode & 0o777, 0o600, 'psql reads a password file that only its owner may');
  const url = `postgres://geohook@127.0.0.1:${database.port}/geohook`;
  t.equal(await psql([url], 'SELECT current_user', { PGPASSFILE: database.server.passwordFile }), 'geohook');
  await t.rejects(psql([url], 'SELECT current_user'), 'no password: refused');
});

t.test('issue 51: the local socket asks for a password, the superuser its own too (no trust)', async (t) => {
  const socket = ['-h', dir, '-p', String(database.port), '-U', 'postgres', '-d', 'geohook'];
  await t.rejects(psql(socket, 'SELECT 1'), { message: /password/ }, 'the superuser without a password: refused');
  const password = readFileSync(join(dir, 'password'), 'utf8').trim();
  t.equal(await psql(socket, 'SELECT current_user', { PGPASSWORD: password }), 'postgres', 'with its password: in');
  t.notMatch(readFileSync(join(dir, 'data', 'pg_hba.conf'), 'utf8'), /^[^#]*\btrust\b/m);
});

t.test('issue 51: a cluster of an earlier geohook (mirror as the superuser, trusted socket) is taken over in place', async (t) => {
  // What an earlier geohook left: the database and the mirror's schema and table owned by the superuser, no role
  // `geohook`, no password file, a socket that trusts.
  await asSuperuser('postgres', ['ALTER DATABASE geohook OWNER TO postgres']);
  await asSuperuser('geohook', [
    'DROP SCHEMA made_by_the_role CASCADE',
    'CREATE SCHEMA geohook',
    'CREATE TABLE geohook.parcels_parcels (objectid integer PRIMARY KEY, shape geometry(Polygon, 3857))',
    'INSERT INTO geohook.parcels_parcels VALUES (1, NULL)',
  ]);
  await asSuperuser('postgres', ['DROP ROLE geohook']);
  rmSync(database.server.passwordFile);
  writeFileSync(join(dir, 'data', 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n');
  await database.server.stop();

  const server = await startPostgresServer({ dir, throwaway: true });
  t.equal(server.port, database.port);
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  t.teardown(() => client.end());
  await client.query('INSERT INTO geohook.parcels_parcels VALUES (2, NULL)');
  const { rows } = await client.query<{ superuser: boolean; schema: string; table: string; srs: string }>(
    `SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
       (SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'geohook') AS schema,
       (SELECT tableowner FROM pg_tables WHERE schemaname = 'geohook' AND tablename = 'parcels_parcels') AS table,
       (SELECT tableowner FROM pg_tables WHERE tablename = 'spatial_ref_sys') AS srs`,
  );
  t.same(rows, [{ superuser: false, schema: 'geohook', table: 'geohook', srs: 'postgres' }], "PostGIS's own table stays the superuser's");
  const socket = ['-h', dir, '-p', String(server.port), '-U', 'postgres', '-d', 'geohook'];
  await t.rejects(psql(socket, 'SELECT 1'), { message: /password/ }, 'the socket no longer trusts');
});
