import type pg from 'pg';
import { readServiceLayers, type LayerInfo } from '../arcgis-request/layer-info.js';
import { readLayerPages } from '../arcgis-request/read-layer-pages.js';
import { readServerGens, scopeGeneration } from '../arcgis-request/server-generations.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { CHANGE_BATCH } from '../changes/change-writer.js';
import type { PreviousValuesStore } from '../changes/previous-values.js';
import { openRange } from '../changes/resolve-range.js';
import { GeohookError } from '../errors.js';
import { writeChanges } from './apply-changes.js';
import { assignTables } from './assign-tables.js';
import {
  applyAttachmentChanges,
  copyAttachments,
  dropAttachmentTable,
  ensureAttachmentTable,
  type AttachmentTarget,
} from './attachment-table.js';
import { copyEncodedPages } from './copy-rows.js';
import { ensureLayerTable, inLockedTransaction } from './mirror-database.js';
import { layerTableOf, mirrorLayerOf } from './mirror-layer.js';
import { readStates, writeState, type LayerState } from './mirror-state.js';
import { createPageEncoder } from './page-encoder.js';
import type { RowEncoding } from './row-encoder.js';
import { tableIndexStatements } from './table-ddl.js';

/** What the mirror follows: a service on ArcGIS Enterprise (its watermark's scope), one layer of it on ArcGIS Online. */
export interface MirrorScope {
  /** The watermark's scope (`<hook> <service>`, `#<layer>` on Online). */
  scope: string;
  /** `Hosted/Parcels.FeatureServer`. */
  service: string;
  serviceUrl: URL;
  /** ArcGIS Online: the scope's one layer. */
  layerId?: number;
}

/** What syncing a scope needs. */
export interface SyncContext {
  pool: pg.Pool;
  schema: string;
  hook: string;
  prefix: string;
  session: ServiceSession;
  /** Read by the range reader (its events' `before`); the mirror never writes it. */
  previous: PreviousValuesStore;
  orgId?: string;
  /** How the rows of change batches are encoded (the receiver's: on its row encoder thread). @defaultValue on the calling thread */
  encodeRows?: RowEncoding;
  /** The scope's service has attachments on: each layer that has them gets an attachments table (its bytes when `keepBytes`). */
  attachments?: { keepBytes: boolean };
}

/** The attachments table of a layer, when the scope keeps them and the layer has them. */
const attachmentTargetOf = (context: SyncContext, layer: LayerInfo, table: string): AttachmentTarget | undefined =>
  context.attachments === undefined || layer.hasAttachments !== true
    ? undefined
    : { schema: context.schema, table, keepBytes: context.attachments.keepBytes };

/** What a layer's table became in one transaction. */
export interface LayerSync {
  layer: number;
  table: string;
  serverGen: number;
  /** Rows of an initial copy. */
  copied?: number;
  /** An initial copy: the plain name its table could not have (another layer's table, or one geohook did not make). */
  plainNameTaken?: string;
  upserted: number;
  deleted: number;
}

/**
 * Brings the scope's layers up to `watermark`: a layer without a table (or state) gets its initial copy; layers
 * behind get the changes of `(their generation, watermark]`. Each is one transaction with the new generation in
 * `mirror_state`. Resolves to what was written (nothing when another process holds the scope).
 */
export async function syncScope(
  context: SyncContext,
  scope: MirrorScope,
  layerIds: readonly number[],
  watermark: number | undefined,
): Promise<LayerSync[]> {
  const states = await readStates(context.pool, context.schema, scope.service, layerIds);
  const missing = layerIds.filter((id) => !states.some((state) => state.layer === id));
  const synced: LayerSync[] = [];
  if (missing.length > 0) synced.push(...(await copyLayers(context, scope, missing)));
  const behind = watermark === undefined ? [] : states.filter((state) => state.serverGen < watermark);
  for (const from of new Set(behind.map((state) => state.serverGen))) {
    const group = behind.filter((state) => state.serverGen === from);
    synced.push(...(await applyRange(context, scope, group, from, watermark!)));
  }
  return synced;
}

/** The layers of the service as it describes them now, those of `ids` only. */
export async function layersNow(context: SyncContext, scope: MirrorScope, ids: readonly number[]): Promise<LayerInfo[]> {
  const { layers } = await readServiceLayers(context.session, scope.serviceUrl);
  return layers.filter((layer) => ids.includes(layer.id));
}

/** The scope's generation on the server now. */
async function serverGenNow(context: SyncContext, scope: MirrorScope): Promise<number> {
  return scopeGeneration(await readServerGens(context.session, scope.serviceUrl), scope.layerId) ?? 0;
}

/** The advisory lock of a scope's syncs. */
export const lockNameOf = (context: SyncContext, scope: MirrorScope): string => `${context.schema}\n${scope.scope}`;

/**
 * Copies layers into `tables` exactly at a generation, in the client's transaction: the server's generation G0 is
 * read, then every row (`COPY`, into tables it makes, their key and index built once the rows are in: a table that
 * exists already is never written, the copy fails with `GEOHOOK_ERR_MIRROR_TABLE_TAKEN`),
 * then G1, and the changes of `(G0, G1]` are applied over the copy: rows edited while the copy was read come as they are at G1, rows deleted are gone. The
 * caller writes the generation (each result's `serverGen`) to `mirror_state` in the same transaction.
 */
export async function copyExact(
  client: pg.ClientBase,
  context: SyncContext,
  scope: MirrorScope,
  tables: readonly { layer: LayerInfo; table: string }[],
): Promise<LayerSync[]> {
  const encoder = createPageEncoder();
  const copied = new Map<number, number>();
  let startGen: number;
  try {
    startGen = await serverGenNow(context, scope);
    for (const { layer, table } of tables) {
      const target = { schema: context.schema, table, layer: mirrorLayerOf(layer) };
      if (!(await ensureLayerTable(client, target, { indexes: false })))
        throw new GeohookError('GEOHOOK_ERR_MIRROR_TABLE_TAKEN', `${scope.service} layer ${layer.id}: the table ${table} exists already`);
      const pages = readLayerPages(context.session, scope.serviceUrl, layer, encoder.of(target.layer));
      copied.set(layer.id, await copyEncodedPages(client, target, pages));
      for (const statement of tableIndexStatements(target.schema, target.table, target.layer)) await client.query(statement);
      const attachments = attachmentTargetOf(context, layer, table);
      if (attachments !== undefined) {
        await ensureAttachmentTable(client, attachments);
        await copyAttachments(client, context.session, scope.serviceUrl, layer, attachments);
      }
    }
  } finally {
    await encoder.close();
  }
  const endGen = await serverGenNow(context, scope);
  const changed =
    endGen > startGen ? await writeRange(client, context, scope, tables, startGen, endGen) : { serverGen: startGen, counts: new Map() };
  return tables.map(({ layer, table }) => ({
    layer: layer.id,
    table,
    serverGen: changed.serverGen,
    copied: copied.get(layer.id) ?? 0,
    ...(changed.counts.get(layer.id) ?? { upserted: 0, deleted: 0 }),
  }));
}

/**
 * The initial copy of layers without a state ({@link copyExact}) into tables named for them ({@link assignTables}),
 * with their table and generation in `mirror_state`.
 */
async function copyLayers(context: SyncContext, scope: MirrorScope, ids: readonly number[]): Promise<LayerSync[]> {
  const synced = await inLockedTransaction(context.pool, lockNameOf(context, scope), async (client) => {
    if ((await readStates(client, context.schema, scope.service, ids, { forUpdate: true })).length > 0) return [];
    const layers = await layersNow(context, scope, ids);
    const copied = await copyExact(client, context, scope, await assignTables(client, context.schema, scope.service, layers));
    for (const { layer, table, serverGen } of copied)
      await writeState(client, context.schema, { service: scope.service, layer, table, serverGen });
    return copied.map((sync, index) => {
      const plain = layerTableOf(scope.service, layers[index]!);
      return sync.table === plain ? sync : { ...sync, plainNameTaken: plain };
    });
  });
  return synced ?? [];
}

/**
 * The changes of `(from, to]` applied to layers at `from`, in one transaction with their new generation; nothing
 * when another process moved them meanwhile (the generation read under the lock is no longer `from`).
 */
async function applyRange(
  context: SyncContext,
  scope: MirrorScope,
  group: readonly LayerState[],
  from: number,
  to: number,
): Promise<LayerSync[]> {
  const ids = group.map((state) => state.layer);
  const synced = await inLockedTransaction(context.pool, lockNameOf(context, scope), async (client) => {
    const current = await readStates(client, context.schema, scope.service, ids, { forUpdate: true });
    if (current.length !== ids.length || current.some((state) => state.serverGen !== from)) return [];
    const layers = await layersNow(context, scope, ids);
    const tables = layers.map((layer) => ({ layer, table: group.find((state) => state.layer === layer.id)!.table }));
    const changed = await writeRange(client, context, scope, tables, from, to);
    for (const state of group) await writeState(client, context.schema, { ...state, serverGen: changed.serverGen });
    return group.map(({ layer, table }) => ({
      layer,
      table,
      serverGen: changed.serverGen,
      ...(changed.counts.get(layer) ?? { upserted: 0, deleted: 0 }),
    }));
  });
  return synced ?? [];
}

/**
 * Writes the changes of `(from, to]` of the layers to their tables, in the client's transaction, a batch of events
 * at a time as the range reader streams them (rows as of the range's end); fields a layer gained get their columns
 * first. Resolves to the generation the tables now equal (past `to` on a server that answers ids only, read up to
 * now) and the rows written per layer.
 */
async function writeRange(
  client: pg.ClientBase,
  context: SyncContext,
  scope: MirrorScope,
  tables: readonly { layer: LayerInfo; table: string }[],
  from: number,
  to: number,
): Promise<{ serverGen: number; counts: Map<number, { upserted: number; deleted: number }> }> {
  const targets = tables.map(({ layer, table }) => ({
    id: layer.id,
    target: { schema: context.schema, table, layer: mirrorLayerOf(layer) },
  }));
  for (const { target } of targets) await ensureLayerTable(client, target);
  const attachmentTargets = new Map<number, AttachmentTarget>();
  for (const { layer, table } of tables) {
    const attachments = attachmentTargetOf(context, layer, table);
    // Attachments off: a table kept from when they were on would fall behind; on again, it is made and copied anew.
    if (attachments === undefined) {
      await dropAttachmentTable(client, context.schema, table);
      continue;
    }
    attachmentTargets.set(layer.id, attachments);
    // A table made now (attachments just turned on): filled with what the layer has, the range applied over it.
    if (await ensureAttachmentTable(client, attachments))
      await copyAttachments(client, context.session, scope.serviceUrl, layer, attachments);
  }
  const opened = await openRange(
    { hook: context.hook, scope: scope.scope, serviceUrl: scope.serviceUrl, from, to },
    {
      session: context.session,
      previous: context.previous,
      prefix: context.prefix,
      track: [],
      origin: 'webhook',
      layers: targets.map(({ id }) => id),
      ...(attachmentTargets.size > 0 ? { attachmentLists: true } : {}),
      ...(context.orgId === undefined ? {} : { orgId: context.orgId }),
      knownSchemas: async (layerScopes) => layerScopes.map(() => undefined),
    },
  );
  const counts = new Map(targets.map(({ id }) => [id, { upserted: 0, deleted: 0 }]));
  const deletedParents = new Map<number, number[]>();
  try {
    for (let start = 0; start < opened.total; start += CHANGE_BATCH) {
      const { events } = await opened.events(start, Math.min(start + CHANGE_BATCH, opened.total));
      for (const event of events)
        if (event.op === 'd' && attachmentTargets.has(event.layer.id) && typeof event.key.objectId === 'number')
          deletedParents.set(event.layer.id, [...(deletedParents.get(event.layer.id) ?? []), event.key.objectId]);
      for (const { id, target } of targets) {
        const written = await writeChanges(
          client,
          target,
          events.filter((event) => event.layer.id === id),
          context.encodeRows,
        );
        const count = counts.get(id)!;
        count.upserted += written.upserted;
        count.deleted += written.deleted;
      }
    }
    if (attachmentTargets.size > 0) {
      const changes = await opened.attachmentChanges();
      for (const [id, target] of attachmentTargets)
        await applyAttachmentChanges(client, context.session, target, changes.get(id), deletedParents.get(id) ?? []);
    }
  } finally {
    await opened.close();
  }
  return { serverGen: Math.max(to, opened.readUpTo ?? to), counts };
}
