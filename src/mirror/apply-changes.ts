import type pg from 'pg';
import type { ChangeEvent } from '../changes/change-event.js';
import { columnTypeOf, qualifiedName, quoteIdentifier, toColumnText, type LayerTable } from './column-types.js';
import type { RowEncoding } from './row-encoder.js';
import { rowColumnsOf } from './row-values.js';
import { keyFieldOf } from './table-ddl.js';

/** The rows {@link writeChanges} wrote. */
export interface WrittenRows {
  upserted: number;
  deleted: number;
}

type Final =
  | { op: 'upsert'; attributes: Record<string, unknown>; geometry?: unknown }
  | { op: 'delete'; objectId?: number | string; globalId?: string };

/** Each feature's last change in the batch, by primary key (a batch may change a feature more than once). */
function finalChanges(batch: LayerTable, events: readonly ChangeEvent[]): Map<string, Final> {
  const key = keyFieldOf(batch.layer);
  const byGlobalId = key.name === batch.layer.globalIdField;
  const finals = new Map<string, Final>();
  for (const event of events) {
    if (event.op === undefined) continue;
    const keyValue = byGlobalId
      ? (event.key.globalId ?? event.after?.attributes[key.name])
      : (event.key.objectId ?? event.after?.attributes[key.name]);
    const id = toColumnText(key.type, keyValue);
    if (event.op === 'd' || event.after === null) {
      const final: Final = { op: 'delete' };
      if (event.key.objectId !== undefined) final.objectId = event.key.objectId;
      if (event.key.globalId !== undefined) final.globalId = event.key.globalId;
      finals.set(id ?? `objectid:${String(event.key.objectId)}`, final);
      continue;
    }
    if (id === null) throw new TypeError(`change event ${event.id}: no ${key.name} to key the row by`);
    const attributes = { ...event.after.attributes, [key.name]: event.after.attributes[key.name] ?? keyValue };
    finals.set(id, { op: 'upsert', attributes, geometry: event.after.geometry });
  }
  return finals;
}

/** Deletes by primary key, and by object id for deletes that carry no GlobalID (in a layer keyed by GlobalID). */
async function deleteRows(client: pg.ClientBase, batch: LayerTable, deletes: Extract<Final, { op: 'delete' }>[]): Promise<number> {
  if (deletes.length === 0) return 0;
  const key = keyFieldOf(batch.layer);
  const table = qualifiedName(batch.schema, batch.table);
  const byKey = key.name === batch.layer.globalIdField ? deletes.map((d) => d.globalId) : deletes.map((d) => d.objectId);
  const keyed = byKey.filter((value) => value !== undefined).map((value) => toColumnText(key.type, value));
  const unkeyed = deletes.filter((_, index) => byKey[index] === undefined).map((d) => String(d.objectId));
  let deleted = 0;
  if (keyed.length > 0) {
    const sql = `DELETE FROM ${table} WHERE ${quoteIdentifier(key.name)} = ANY($1::${columnTypeOf(key.type)}[])`;
    deleted += (await client.query(sql, [keyed])).rowCount ?? 0;
  }
  if (unkeyed.length > 0) {
    const sql = `DELETE FROM ${table} WHERE ${quoteIdentifier(batch.layer.objectIdField)} = ANY($1::bigint[])`;
    deleted += (await client.query(sql, [unkeyed])).rowCount ?? 0;
  }
  return deleted;
}

/** Encodes rows on the calling thread: for a caller that answers no deliveries (tests, `geohook mirror rebuild`). */
export const encodeInThread: RowEncoding = async (layer, rows) => rows.map(rowColumnsOf(layer).values);

/** Inserts or updates rows in one statement: each column's values as one array parameter, unnested. */
async function upsertRows(
  client: pg.ClientBase,
  batch: LayerTable,
  upserts: Extract<Final, { op: 'upsert' }>[],
  encode: RowEncoding,
): Promise<number> {
  if (upserts.length === 0) return 0;
  const columns = rowColumnsOf(batch.layer);
  const key = keyFieldOf(batch.layer).name;
  const rows = await encode(
    batch.layer,
    upserts.map(({ attributes, geometry }) => ({ attributes, geometry })),
  );
  const arrays = columns.names.map((_, column) => rows.map((values) => values[column] ?? null));
  const names = columns.names.map(quoteIdentifier);
  // geometry[] literals are ':'-delimited (PostGIS's typdelim): geometries travel as text[] and are cast once unnested.
  const arrayTypes = columns.sqlTypes.map((sqlType) => (sqlType === 'geometry' ? 'text' : sqlType));
  const unnest = arrayTypes.map((sqlType, index) => `$${index + 1}::${sqlType}[]`).join(', ');
  const aliases = columns.names.map((_, index) => `c${index}`);
  const selected = aliases.map((alias, index) => (columns.sqlTypes[index] === 'geometry' ? `${alias}::geometry` : alias));
  const updates = columns.names
    .filter((name) => name !== key)
    .map((name) => `${quoteIdentifier(name)} = EXCLUDED.${quoteIdentifier(name)}`);
  const sql =
    `INSERT INTO ${qualifiedName(batch.schema, batch.table)} (${names.join(', ')}) ` +
    `SELECT ${selected.join(', ')} FROM unnest(${unnest}) AS u(${aliases.join(', ')}) ` +
    `ON CONFLICT (${quoteIdentifier(key)}) ${updates.length === 0 ? 'DO NOTHING' : `DO UPDATE SET ${updates.join(', ')}`}`;
  await client.query(sql, arrays);
  return upserts.length;
}

/**
 * Writes one layer's change events to its table in the client's current transaction (a sync's, which writes the
 * layer's generation to `mirror_state` in it too): each feature's last change wins; creates, updates and reads are
 * upserts (`INSERT … ON CONFLICT DO UPDATE`), deletes remove the row by its key. Schema events are skipped: the
 * sync gives a field the layer gained its column first (`ensureLayerTable`). The rows are encoded by `encode` (the
 * mirror's row encoder thread, see `row-encoder.ts`).
 */
export async function writeChanges(
  client: pg.ClientBase,
  target: LayerTable,
  events: readonly ChangeEvent[],
  encode: RowEncoding = encodeInThread,
): Promise<WrittenRows> {
  const finals = [...finalChanges(target, events).values()];
  const deleted = await deleteRows(
    client,
    target,
    finals.filter((final) => final.op === 'delete'),
  );
  const upserted = await upsertRows(
    client,
    target,
    finals.filter((final) => final.op === 'upsert'),
    encode,
  );
  return { upserted, deleted };
}
