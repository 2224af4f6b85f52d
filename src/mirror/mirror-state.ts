import type pg from 'pg';
import { qualifiedName } from './column-types.js';
import { STATE_TABLE } from './table-ddl.js';

/** A layer's row of `<schema>.mirror_state`: the server generation its table equals. */
export interface LayerState {
  /** `Hosted/Parcels.FeatureServer`. */
  service: string;
  /** The layer id. */
  layer: number;
  /** The table's name in the schema. */
  table: string;
  serverGen: number;
  /** When the row was last written. */
  updatedAt?: Date;
}

type StateRow = { service: string; layer: number; table_name: string; server_gen: string; updated_at: Date };

const stateOf = (row: StateRow): LayerState => ({
  service: row.service,
  layer: row.layer,
  table: row.table_name,
  serverGen: Number(row.server_gen),
  updatedAt: row.updated_at,
});

/**
 * The recorded states of a service's layers (of all of them when `layers` is undefined), by layer id; with
 * `forUpdate`, locked until the transaction ends, so that what is read is what is written over.
 */
export async function readStates(
  client: pg.ClientBase | pg.Pool,
  schema: string,
  service: string,
  layers?: readonly number[],
  { forUpdate = false }: { forUpdate?: boolean } = {},
): Promise<LayerState[]> {
  const { rows } = await client.query<StateRow>(
    `SELECT service, layer, table_name, server_gen, updated_at FROM ${qualifiedName(schema, STATE_TABLE)}
     WHERE service = $1 AND ($2::integer[] IS NULL OR layer = ANY($2)) ORDER BY layer${forUpdate ? ' FOR UPDATE' : ''}`,
    [service, layers ?? null],
  );
  return rows.map(stateOf);
}

/** Every layer's state, by service then layer. */
export async function readAllStates(client: pg.ClientBase | pg.Pool, schema: string): Promise<LayerState[]> {
  const { rows } = await client.query<StateRow>(
    `SELECT service, layer, table_name, server_gen, updated_at FROM ${qualifiedName(schema, STATE_TABLE)} ORDER BY service, layer`,
  );
  return rows.map(stateOf);
}

/** Records a layer's generation (in the client's transaction, with the rows that bring the table to it). */
export async function writeState(client: pg.ClientBase, schema: string, state: Omit<LayerState, 'updatedAt'>): Promise<void> {
  await client.query(
    `INSERT INTO ${qualifiedName(schema, STATE_TABLE)} (service, layer, table_name, server_gen) VALUES ($1, $2, $3, $4)
     ON CONFLICT (service, layer) DO UPDATE SET table_name = EXCLUDED.table_name, server_gen = EXCLUDED.server_gen, updated_at = now()`,
    [state.service, state.layer, state.table, state.serverGen],
  );
}

/**
 * Makes `mirror_state` hold a table for one layer at most (a unique index on `table_name`, made once, under a name
 * PostgreSQL picks free). Layers recorded with one table between them are released first: nobody can say whose
 * rows that table holds, so each gets a table of its own at its next copy, and the shared one is left as it is,
 * never written again. Resolves to the layers released. In the client's transaction.
 */
export async function ensureTablesOwned(client: pg.ClientBase, schema: string): Promise<LayerState[]> {
  const state = qualifiedName(schema, STATE_TABLE);
  const { rows } = await client.query<{ indexed: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
       WHERE i.indrelid = $1::regclass AND i.indisunique AND i.indnkeyatts = 1 AND a.attname = 'table_name') AS indexed`,
    [state],
  );
  if (rows[0]?.indexed === true) return [];
  const released = await client.query<StateRow>(
    `DELETE FROM ${state} WHERE table_name IN (SELECT table_name FROM ${state} GROUP BY table_name HAVING count(*) > 1)
     RETURNING service, layer, table_name, server_gen, updated_at`,
  );
  await client.query(`CREATE UNIQUE INDEX ON ${state} (table_name)`);
  return released.rows.map(stateOf);
}
