import type pg from 'pg';
import { assignRebuildTables, assignTables } from './assign-tables.js';
import { qualifiedName, quoteIdentifier } from './column-types.js';
import { inLockedTransaction } from './mirror-database.js';
import { readStates, writeState } from './mirror-state.js';
import { copyExact, layersNow, lockNameOf, type LayerSync, type MirrorScope, type SyncContext } from './sync-scope.js';
import { gistIndexNameOf } from './table-ddl.js';

/** Drops `table` and gives `rebuilt` its name, its index's and its primary key's (in the client's transaction). */
async function swapTables(client: pg.ClientBase, schema: string, table: string, rebuilt: string): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${qualifiedName(schema, table)}`);
  await client.query(`ALTER TABLE ${qualifiedName(schema, rebuilt)} RENAME TO ${quoteIdentifier(table)}`);
  await client.query(
    `ALTER INDEX IF EXISTS ${qualifiedName(schema, gistIndexNameOf(rebuilt))} RENAME TO ${quoteIdentifier(gistIndexNameOf(table))}`,
  );
  const { rows } = await client.query<{ conname: string }>(
    "SELECT conname FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'",
    [qualifiedName(schema, table)],
  );
  const key = rows[0]?.conname;
  const wanted = `${table.slice(0, 58)}_pkey`;
  if (key !== undefined && key !== wanted) {
    await client.query(
      `ALTER TABLE ${qualifiedName(schema, table)} RENAME CONSTRAINT ${quoteIdentifier(key)} TO ${quoteIdentifier(wanted)}`,
    );
  }
}

/**
 * Rebuilds the tables of a scope's layers (`geohook mirror rebuild`): each layer copied exactly at a generation into
 * a new table (named by {@link assignRebuildTables}: never a table that exists), which then takes the place of the
 * layer's table in `mirror_state` (a layer without one gets a table named by {@link assignTables}), with the
 * generation, all in one transaction: readers see the old table until the new one is whole. A table whose rows were
 * changed by hand, or that missed a field's values, is the layer again. Resolves to `undefined` when a sync of the
 * scope holds its lock.
 */
export async function rebuildScope(
  context: SyncContext,
  scope: MirrorScope,
  layerIds: readonly number[],
): Promise<LayerSync[] | undefined> {
  return inLockedTransaction(context.pool, lockNameOf(context, scope), async (client) => {
    const states = await readStates(client, context.schema, scope.service, layerIds, { forUpdate: true });
    const layers = await layersNow(context, scope, layerIds);
    const recorded = new Map(states.map((state) => [state.layer, state.table]));
    const named = await assignTables(
      client,
      context.schema,
      scope.service,
      layers.filter((layer) => !recorded.has(layer.id)),
    );
    const owned = layers.map((layer) => recorded.get(layer.id) ?? named.find((entry) => entry.layer === layer)!.table);
    const rebuiltNames = await assignRebuildTables(client, context.schema, owned);
    const tables = layers.map((layer, index) => ({ layer, table: owned[index]!, rebuilt: rebuiltNames[index]! }));
    const copied = await copyExact(
      client,
      context,
      scope,
      tables.map(({ layer, rebuilt }) => ({ layer, table: rebuilt })),
    );
    const synced: LayerSync[] = [];
    for (const [index, { table, rebuilt }] of tables.entries()) {
      const sync = copied[index]!;
      await swapTables(client, context.schema, table, rebuilt);
      await writeState(client, context.schema, { service: scope.service, layer: sync.layer, table, serverGen: sync.serverGen });
      synced.push({ ...sync, table });
    }
    return synced;
  });
}
