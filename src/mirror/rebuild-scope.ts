import type pg from 'pg';
import { assignRebuildTables, assignTables } from './assign-tables.js';
import { attachmentParentIndexOf, attachmentTableOf, dropAttachmentTable } from './attachment-table.js';
import { qualifiedName, quoteIdentifier } from './column-types.js';
import { inLockedTransaction } from './mirror-database.js';
import { readStates, writeState } from './mirror-state.js';
import { copyExact, layersNow, lockNameOf, type LayerSync, type MirrorScope, type SyncContext } from './sync-scope.js';
import { gistIndexNameOf } from './table-ddl.js';

/**
 * Drops `table` and gives `rebuilt` its name, and its primary key's; `indexes` are renamed with it (`[rebuilt's, table's]`,
 * those that exist). In the client's transaction.
 */
async function swapTable(
  client: pg.ClientBase,
  schema: string,
  table: string,
  rebuilt: string,
  indexes: readonly [string, string][],
): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${qualifiedName(schema, table)}`);
  await client.query(`ALTER TABLE ${qualifiedName(schema, rebuilt)} RENAME TO ${quoteIdentifier(table)}`);
  for (const [from, to] of indexes)
    await client.query(`ALTER INDEX IF EXISTS ${qualifiedName(schema, from)} RENAME TO ${quoteIdentifier(to)}`);
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
 * Gives `rebuilt`, a rebuild's copy of a layer, the place of the layer's `table`, with its index; and its attachments
 * table that of `table`'s (when the copy made none, attachments off, `table`'s is dropped: it would fall behind).
 */
async function swapTables(client: pg.ClientBase, schema: string, table: string, rebuilt: string): Promise<void> {
  await swapTable(client, schema, table, rebuilt, [[gistIndexNameOf(rebuilt), gistIndexNameOf(table)]]);
  const attachments = attachmentTableOf(table);
  const rebuiltAttachments = attachmentTableOf(rebuilt);
  const { rows } = await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [
    qualifiedName(schema, rebuiltAttachments),
  ]);
  if (rows[0]?.found === null || rows[0]?.found === undefined) return dropAttachmentTable(client, schema, table);
  await swapTable(client, schema, attachments, rebuiltAttachments, [[attachmentParentIndexOf(rebuilt), attachmentParentIndexOf(table)]]);
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
