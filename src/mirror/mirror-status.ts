import type pg from 'pg';
import { isOnlineAdminRoot } from '../arcgis/online-admin.js';
import { loadPg } from '../commonjs/pg.js';
import { scopeOf } from '../events/tracked-ranges.js';
import type { RedisClient } from '../redis/connection.js';
import { mirrorErrorsKey, serverGensKey, watermarksKey } from '../redis/keys.js';
import { countRows } from './mirror-database.js';
import { readAllStates } from './mirror-state.js';

/** Where one mirrored layer stands (`geohook mirror status`). */
export interface MirrorLayerStatus {
  /** `Hosted/Parcels.FeatureServer`. */
  service: string;
  /** The layer id. */
  layer: number;
  /** `<schema>.<table>`; `null` for a layer not copied yet. */
  table: string | null;
  rows: number;
  /** The generation the table equals (`mirror_state`); `null` for a layer not copied yet. */
  serverGen: number | null;
  /** Generations the table is behind the newest geohook knows of the layer (its watermark, or the server's last report). */
  lagGens: number;
  /** Seconds since the table was last brought up to date, while it is behind; 0 when it is not. */
  lagSeconds: number;
  /** Why the last sync of the layer failed, until one succeeds. */
  lastError: string | null;
}

/** What {@link readMirrorStatus} reads. */
export interface MirrorStatusSources {
  client: pg.ClientBase | pg.Pool;
  schema: string;
  redis: RedisClient;
  prefix: string;
  hook: string;
  adminUrl: string;
}

const errorOf = (value: string | undefined): string | null => {
  if (value === undefined) return null;
  try {
    return String((JSON.parse(value) as { error?: unknown }).error);
  } catch {
    return value;
  }
};

/** Every mirrored layer's status: its table and generation from PostgreSQL, the watermarks and last failures from Redis. */
export async function readMirrorStatus(sources: MirrorStatusSources): Promise<{ layers: MirrorLayerStatus[] }> {
  const { client, schema, redis, prefix, hook } = sources;
  const online = isOnlineAdminRoot(sources.adminUrl);
  const states = await readAllStates(client, schema);
  const errors = await redis.hgetall(mirrorErrorsKey(prefix));
  const scopes = states.map((state) => (online ? scopeOf(hook, state.service, state.layer) : scopeOf(hook, state.service)));
  const [marks, delivered] =
    scopes.length === 0
      ? [[], []]
      : await Promise.all([redis.hmget(watermarksKey(prefix), ...scopes), redis.hmget(serverGensKey(prefix), ...scopes)]);
  const now = Date.now();
  const layers: MirrorLayerStatus[] = [];
  for (const [index, state] of states.entries()) {
    // The server generation is recorded as `<generation>\t<service URL>`.
    const newest = Math.max(state.serverGen, Number(marks[index] ?? 0), Number(delivered[index]?.split('\t')[0] ?? 0));
    const lagGens = newest - state.serverGen;
    layers.push({
      service: state.service,
      layer: state.layer,
      table: `${schema}.${state.table}`,
      rows: await countRows(client, schema, state.table),
      serverGen: state.serverGen,
      lagGens,
      lagSeconds: lagGens === 0 || state.updatedAt === undefined ? 0 : Math.round((now - state.updatedAt.getTime()) / 1000),
      lastError: errorOf(errors[`${state.service}#${state.layer}`]),
    });
  }
  for (const [field, value] of Object.entries(errors)) {
    const [service = '', layer] = field.split('#');
    if (layers.some((known) => known.service === service && known.layer === Number(layer))) continue;
    layers.push({
      service,
      layer: Number(layer),
      table: null,
      rows: 0,
      serverGen: null,
      lagGens: 0,
      lagSeconds: 0,
      lastError: errorOf(value),
    });
  }
  return { layers };
}

/** Reads the mirror's status from its own small pool (the dashboard's), until closed. */
export interface MirrorStatusReader {
  read(): Promise<{ layers: MirrorLayerStatus[] }>;
  close(): Promise<void>;
}

/** A {@link MirrorStatusReader} on `databaseUrl`: one connection at most, a lost one replaced at the next read. */
export function createMirrorStatusReader(sources: Omit<MirrorStatusSources, 'client'> & { databaseUrl: string }): MirrorStatusReader {
  const pool = new (loadPg().Pool)({ connectionString: sources.databaseUrl, max: 1, connectionTimeoutMillis: 5000 });
  pool.on('error', () => undefined);
  return {
    read: () => readMirrorStatus({ ...sources, client: pool }),
    close: () => pool.end(),
  };
}
