import { createHash } from 'node:crypto';
import { parseServiceName } from '../arcgis/service-name.js';
import type { EsriFeature } from '../arcgis-request/extract-changes.js';
import { readServiceLayers, type LayerInfo } from '../arcgis-request/layer-info.js';
import { featurePages, readLayerPages } from '../arcgis-request/read-layer-pages.js';
import { readServerGens } from '../arcgis-request/server-generations.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import type { ChangeFilters } from '../config/types.js';
import { scopeOf } from '../events/tracked-ranges.js';
import type { RedisClient } from '../redis/connection.js';
import { changesResolvedKey, changesPreviousKey } from '../redis/keys.js';
import { editorOf, geometryHash, rowOf, trackedOf, type TrackedFields } from './build-change-events.js';
import { changeEventId, type ChangeEvent } from './change-event.js';
import { layerFilterOf } from './change-filter.js';
import { CHANGE_BATCH, type ChangeWriter } from './change-writer.js';
import { layerScopeOf } from './layer-scope.js';
import { LineSpool } from './line-spool.js';
import type { PreviousValuesStore, PreviousValuesWrite } from './previous-values.js';

/** What a snapshot needs. */
export interface SnapshotOptions {
  connection: RedisClient;
  prefix: string;
  hook: string;
  /** `folder/name.FeatureServer`. */
  service: string;
  serviceUrl: URL;
  session: ServiceSession;
  track: TrackedFields;
  writer: ChangeWriter;
  previous: PreviousValuesStore;
  /** ArcGIS Online: each layer is a scope of its own. */
  online: boolean;
  orgId?: string;
  /** The service's filters: only the rows that pass are read. */
  filters?: ChangeFilters;
  /**
   * Given the server generation the snapshot reads at, the generation its events' ids name: a snapshot taken again
   * after a crash names the first one's, so that the rows it had written are not written twice.
   * @defaultValue the generation read
   */
  pinGeneration?: (serverGen: number) => Promise<number>;
}

/** What a snapshot read: its events, and the generation streaming goes on from. */
export interface SnapshotResult {
  events: number;
  added: number;
  serverGen: number;
}

/** A row read by a snapshot: its event (without its place in the snapshot) and the previous values it seeds. */
interface SnapshotRow {
  layerId: number;
  event: Omit<ChangeEvent, 'source'>;
  write: PreviousValuesWrite;
}

/** What every row of a snapshot shares. */
interface SnapshotContext extends SnapshotOptions {
  serviceRef: ChangeEvent['service'];
  /** The generation the events' ids name, and the one the rows were read at. */
  idGen: number;
  serverGen: number;
  /** When the snapshot was taken: the time of a row without editor tracking. */
  now: string;
}

/** A feature as a `change.read` event; `undefined` for a row without an object id. */
function snapshotRow(context: SnapshotContext, layer: LayerInfo, feature: EsriFeature): SnapshotRow | undefined {
  const { hook, service } = context;
  const after = rowOf(layer, feature, undefined);
  const objectId = after.attributes[layer.objectIdField];
  if (typeof objectId !== 'number') return undefined;
  const globalId = layer.globalIdField === undefined ? undefined : after.attributes[layer.globalIdField];
  const key = { objectId, ...(typeof globalId === 'string' ? { globalId } : {}) };
  const editor = editorOf(layer, after.attributes);
  const event: Omit<ChangeEvent, 'source'> = {
    id: changeEventId({
      hook,
      service,
      layerId: layer.id,
      key: typeof globalId === 'string' ? globalId : `o${objectId}`,
      op: 'r',
      version: `g${context.idGen}`,
    }),
    type: 'change.read',
    op: 'r',
    hook,
    service: context.serviceRef,
    layer: { id: layer.id, name: layer.name },
    key,
    after,
    before: null,
    ts: editor?.at ?? context.now,
    ...(editor === undefined ? {} : { editor }),
  };
  const hash = after.geometry === undefined ? undefined : geometryHash(after.geometry);
  const write: PreviousValuesWrite = {
    objectId,
    serverGen: context.serverGen,
    ...(typeof globalId === 'string' ? { globalId } : {}),
    ...(hash === undefined ? {} : { geometryHash: hash }),
    attributes: trackedOf(after.attributes, context.track, layer),
  };
  return { layerId: layer.id, event, write };
}

/**
 * An initial snapshot (Debezium's order): reads the server's generation, then every row of the service's layers
 * (parents first, read with `query` by object id ranges, see {@link readLayerPages}), each a `change.read` (`op: "r"`) that seeds the previous
 * values; streaming then goes on from that generation (a scope resolved below it moves up to it). A row edited
 * meanwhile comes as a read and as an update.
 */
export async function snapshotService(options: SnapshotOptions): Promise<SnapshotResult> {
  const { session, serviceUrl, hook, service } = options;
  const gens = await readServerGens(session, serviceUrl);
  const serverGen = Math.max(0, ...gens.map((gen) => gen.serverGen));
  const idGen = (await options.pinGeneration?.(serverGen)) ?? serverGen;
  const { layers } = await readServiceLayers(session, serviceUrl);
  const ordered = [...layers].sort((a, b) => Number(a.isChild) - Number(b.isChild) || a.id - b.id);
  const scope = scopeOf(hook, service);
  const transactionId = createHash('sha256').update(`snapshot\n${scope}\n${idGen}`).digest('hex');
  const { folder, name } = parseServiceName(service);
  const serviceRef: ChangeEvent['service'] = {
    ...(folder === undefined ? {} : { folderName: folder }),
    serviceName: name,
    serviceType: 'FeatureServer',
    url: serviceUrl.href,
    ...(options.orgId === undefined ? {} : { orgId: options.orgId }),
  };
  const now = new Date().toISOString();
  // Counted first (each event names the snapshot's total), in a file rather than in memory.
  const spool = await LineSpool.open<SnapshotRow>();
  try {
    for (const layer of ordered) {
      const filter = layerFilterOf(options.filters, layer);
      for await (const features of readLayerPages(session, serviceUrl, layer, featurePages(layer))) {
        for (const feature of features) {
          if (filter !== undefined && !filter.test(feature)) continue;
          const row = snapshotRow({ ...options, serviceRef, idGen, serverGen, now }, layer, feature);
          if (row !== undefined) await spool.write(row);
        }
      }
    }
    const total = spool.count;
    let added = 0;
    let index = 0;
    for await (const batch of spool.batches(CHANGE_BATCH)) {
      added += await options.writer.write(
        batch.map(({ event }) => ({
          ...event,
          source: { origin: 'snapshot', serverGens: [serverGen, serverGen], transaction: { id: transactionId, index: index++, total } },
        })),
        ordered,
      );
      for (const layer of ordered) {
        const writes = batch.filter((row) => row.layerId === layer.id).map(({ write }) => write);
        if (writes.length > 0) await options.previous.write(changesPreviousKey(options.prefix, layerScopeOf(scope, layer.id)), writes);
      }
    }
    await moveResolved(options, ordered, scope, serverGen);
    return { events: total, added, serverGen };
  } finally {
    await spool.close();
  }
}

/** Scopes resolved below the snapshot's generation move up to it: streaming goes on from there. */
async function moveResolved(options: SnapshotOptions, ordered: readonly LayerInfo[], scope: string, serverGen: number): Promise<void> {
  const scopes = options.online ? ordered.map((layer) => layerScopeOf(scope, layer.id)) : [scope];
  for (const followed of scopes) {
    const resolved = await options.connection.hget(changesResolvedKey(options.prefix), followed);
    if (resolved === null || Number(resolved) < serverGen)
      await options.connection.hset(changesResolvedKey(options.prefix), followed, String(serverGen));
  }
}
