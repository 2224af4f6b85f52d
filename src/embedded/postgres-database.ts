import type pg from 'pg';
import { loadPg } from '../commonjs/pg.js';
import { MIRROR_ROLE } from './postgres-access.js';

/**
 * The statements that hand to {@link MIRROR_ROLE} what an earlier geohook's mirror made as the superuser: its
 * schemas and tables (their indexes and sequences follow), never what belongs to an extension (PostGIS's
 * `spatial_ref_sys`) or to the system.
 */
const HAND_OVER = `
SELECT format('ALTER SCHEMA %I OWNER TO ${MIRROR_ROLE}', n.nspname) AS statement
FROM pg_namespace n
WHERE n.nspowner = 'postgres'::regrole AND n.nspname NOT IN ('public', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_namespace'::regclass AND d.objid = n.oid AND d.deptype = 'e')
UNION ALL
SELECT format('ALTER TABLE %I.%I OWNER TO ${MIRROR_ROLE}', n.nspname, c.relname)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relowner = 'postgres'::regrole AND c.relkind IN ('r', 'p') AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')`;

/** Runs `work` on a connection to `url`, closed afterwards. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new (loadPg().Client)({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * As the superuser (`superuserBase`: a `postgres://` URL without a database): the role {@link MIRROR_ROLE} that
 * logs in with `password` and is no superuser, the database `geohook` it owns, and PostGIS there (creating an
 * extension takes the superuser). A cluster of an earlier geohook, whose mirror ran as the superuser, gets the role,
 * which takes over the database, its schemas and its tables. Safe to run at each start.
 */
export async function prepareGeohookDatabase(superuserBase: string, password: string): Promise<void> {
  await withClient(`${superuserBase}/postgres`, async (client) => {
    const { rowCount: roles } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [MIRROR_ROLE]);
    if (roles === 0) await client.query(`CREATE ROLE ${MIRROR_ROLE}`);
    await client.query(
      `ALTER ROLE ${MIRROR_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${client.escapeLiteral(password)}`,
    );
    const { rows } = await client.query<{ owner: string }>(
      "SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = 'geohook'",
    );
    if (rows.length === 0) await client.query(`CREATE DATABASE geohook OWNER ${MIRROR_ROLE}`);
    else if (rows[0]!.owner !== MIRROR_ROLE) await client.query(`ALTER DATABASE geohook OWNER TO ${MIRROR_ROLE}`);
  });
  await withClient(`${superuserBase}/geohook`, async (client) => {
    await client.query('CREATE EXTENSION IF NOT EXISTS postgis');
    const { rows } = await client.query<{ statement: string }>(HAND_OVER);
    for (const { statement } of rows) await client.query(statement);
  });
}
