import type pg from 'pg';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import { GeohookError } from '../errors.js';
import { digestOf, identifierWithSuffix, qualifiedName } from './column-types.js';
import { layerTableOf } from './mirror-layer.js';
import { gistIndexNameOf, STATE_TABLE } from './table-ddl.js';

/** The names a table tries, its plain one included, before its layer fails. */
const MAX_NAMES = 10;

/** The first key of the advisory lock a transaction holds on a table name it is about to make. */
const NAME_LOCK_SPACE = 'geohook-mirror-table';

/**
 * The names a table may take, in order: `plain`, then `plain` with `_<tag>`, `_<tag>_2`, … (each cut to fit
 * PostgreSQL's 63 bytes).
 */
function* namesOf(plain: string, tag: string): Generator<string> {
  yield plain;
  yield identifierWithSuffix(plain, `_${tag}`);
  for (let n = 2; n < MAX_NAMES; n += 1) yield identifierWithSuffix(plain, `_${tag}_${n}`);
}

/**
 * Whether the transaction on `client` may make a table named `name` in `schema`: neither the name nor its GiST
 * index's is a relation there (a table geohook did not make included) or recorded in `mirror_state`, and no other
 * transaction is about to make it (an advisory lock on the name, held until this transaction ends).
 */
async function claimName(client: pg.ClientBase, schema: string, name: string): Promise<boolean> {
  const { rows } = await client.query<{ free: boolean }>(
    `SELECT NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = ANY($2))
       AND NOT EXISTS (SELECT 1 FROM ${qualifiedName(schema, STATE_TABLE)} WHERE table_name = ANY($2))
       AND pg_try_advisory_xact_lock(hashtext($3), hashtext($1 || '.' || $4)) AS free`,
    [schema, [name, gistIndexNameOf(name)], NAME_LOCK_SPACE, name],
  );
  return rows[0]?.free === true;
}

/** The first of `names` that is free ({@link claimName}) and not in `taken` (names this transaction claimed), added to it. */
async function claimFirstFree(
  client: pg.ClientBase,
  schema: string,
  names: Iterable<string>,
  taken: Set<string>,
  what: string,
): Promise<string> {
  const tried: string[] = [];
  for (const name of names) {
    tried.push(name);
    if (taken.has(name) || !(await claimName(client, schema, name))) continue;
    taken.add(name);
    return name;
  }
  throw new GeohookError('GEOHOOK_ERR_MIRROR_TABLE_TAKEN', `${what}: every name it may take is taken (${tried.join(', ')})`);
}

/**
 * Names the tables of layers of `service` that have none (in the client's transaction, under the scope's lock,
 * which writes them to `mirror_state` with the copy): each its plain name ({@link layerTableOf}) when free,
 * else that name with a digest of the service and the layer id (`_1f2e3d4c`, then `_1f2e3d4c_2`…). A name is
 * free when no relation has it (a table geohook did not make is never taken over), no other layer has it in
 * `mirror_state`, and no other transaction is making it; so two layers never share a table, and a layer keeps
 * its table's name from then on. Throws `GEOHOOK_ERR_MIRROR_TABLE_TAKEN` when none is free.
 */
export async function assignTables(
  client: pg.ClientBase,
  schema: string,
  service: string,
  layers: readonly LayerInfo[],
): Promise<{ layer: LayerInfo; table: string }[]> {
  const taken = new Set<string>();
  const assigned: { layer: LayerInfo; table: string }[] = [];
  for (const layer of layers) {
    const names = namesOf(layerTableOf(service, layer), digestOf(`${service}#${layer.id}`));
    assigned.push({ layer, table: await claimFirstFree(client, schema, names, taken, `${service} layer ${layer.id}`) });
  }
  return assigned;
}

/**
 * Names the tables a rebuild copies `tables` into before they take their places (in the client's transaction,
 * under the scope's lock): `<table>_rebuild` when free (see {@link assignTables}), else with a digest of the
 * table's name. Never a table that exists: the rebuild makes each one, and drops none but the layers' own.
 */
export async function assignRebuildTables(client: pg.ClientBase, schema: string, tables: readonly string[]): Promise<string[]> {
  const taken = new Set<string>();
  const assigned: string[] = [];
  for (const table of tables) {
    const names = namesOf(identifierWithSuffix(table.slice(0, 50), '_rebuild'), digestOf(table));
    assigned.push(await claimFirstFree(client, schema, names, taken, `the rebuild of ${table}`));
  }
  return assigned;
}
