import type pg from 'pg';
import { loadPg } from '../commonjs/pg.js';
import { GeohookError } from '../errors.js';
import { qualifiedName, type LayerTable } from './column-types.js';
import { ensureTablesOwned, type LayerState } from './mirror-state.js';
import { addColumnStatement, createStateStatements, createTableStatements, type CreateTableOptions } from './table-ddl.js';

/** The first key of every advisory lock the mirror takes (the second names what is locked). */
const LOCK_SPACE = 'geohook-mirror';

/** A pool of connections to MIRROR_DATABASE_URL; a connection that breaks (PostgreSQL restarted) is dropped, not fatal. */
export function createMirrorPool(databaseUrl: string, onError: (err: Error) => void): pg.Pool {
  const pool = new (loadPg().Pool)({ connectionString: databaseUrl, max: 4, connectionTimeoutMillis: 10_000 });
  pool.on('error', onError);
  return pool;
}

/**
 * Runs `work` in one transaction that holds the advisory lock of `lockName`, so that two geohook processes never
 * write a scope at once: resolves to what `work` resolves to, or to `undefined` when another process holds the
 * lock (nothing was done). Any error rolls everything back and rejects.
 */
export async function inLockedTransaction<T>(
  pool: pg.Pool,
  lockName: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T | undefined> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection lost while checked out (PostgreSQL restarted) is reported on the client, not the pool.
  const lost = (err: Error): void => void (broken = err);
  client.on('error', lost);
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock(hashtext($1), hashtext($2)) AS locked', [
      LOCK_SPACE,
      lockName,
    ]);
    if (rows[0]?.locked !== true) {
      await client.query('ROLLBACK');
      return undefined;
    }
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch((rollbackErr: unknown) => (broken = rollbackErr as Error));
    throw err;
  } finally {
    client.off('error', lost);
    client.release(broken);
  }
}

/**
 * Makes the mirror's schema and `mirror_state`, once PostGIS is there: `CREATE EXTENSION IF NOT EXISTS postgis`
 * when it is missing (which needs the right to create it), with a table for one layer at most (see
 * {@link ensureTablesOwned}: resolves to the layers released from a table they shared). Safe to run from several
 * processes at once.
 */
export async function prepareMirrorDatabase(pool: pg.Pool, schema: string): Promise<LayerState[]> {
  const prepared = await inLockedTransaction(pool, 'setup', async (client) => {
    const { rows } = await client.query<{ installed: boolean }>(
      "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'postgis') AS installed",
    );
    if (rows[0]?.installed !== true) {
      await client.query('CREATE EXTENSION IF NOT EXISTS postgis').catch((err: unknown) => {
        throw new GeohookError(
          'GEOHOOK_ERR_MIRROR_POSTGIS',
          `PostGIS is not installed in the mirror's database and could not be: ${(err as Error).message}`,
          {
            cause: err,
          },
        );
      });
    }
    for (const statement of createStateStatements(schema)) await client.query(statement);
    return ensureTablesOwned(client, schema);
  });
  if (prepared === undefined)
    throw new GeohookError('GEOHOOK_ERR_MIRROR_DATABASE', 'another geohook is preparing the mirror database: trying again');
  return prepared;
}

/**
 * Makes a layer's table if it is missing (without its primary key and index when `indexes` is false: see
 * {@link CreateTableOptions}), and adds the columns of fields the layer gained since (a dropped field's column stays,
 * no longer fed). Only the missing statements run: a table that is up to date is not locked. Resolves to whether the
 * table was made.
 */
export async function ensureLayerTable(
  client: pg.ClientBase,
  { schema, table, layer }: LayerTable,
  options: CreateTableOptions = {},
): Promise<boolean> {
  const { rows } = await client.query<{ column_name: string }>(
    'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
    [schema, table],
  );
  if (rows.length === 0) {
    for (const statement of createTableStatements(schema, table, layer, options)) await client.query(statement);
    return true;
  }
  const columns = new Set(rows.map((row) => row.column_name));
  for (const field of layer.fields.filter((candidate) => !columns.has(candidate.name))) {
    const statement = addColumnStatement(schema, table, field);
    if (statement !== undefined) await client.query(statement);
  }
  return false;
}

/** The rows a table holds. */
export async function countRows(client: pg.ClientBase | pg.Pool, schema: string, table: string): Promise<number> {
  const { rows } = await client.query<{ count: string }>(`SELECT count(*) AS count FROM ${qualifiedName(schema, table)}`);
  return Number(rows[0]?.count ?? 0);
}
