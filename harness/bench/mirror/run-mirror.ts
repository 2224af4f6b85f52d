import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { EsriFeature } from '../../../src/arcgis-request/extract-changes.js';
import { startPostgresServer } from '../../../src/embedded/postgres-server.js';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { quoteIdentifier, type MirrorLayer } from '../../../src/mirror/column-types.js';
import { copyLine } from '../../../src/mirror/copy-text.js';
import { rowColumnsOf } from '../../../src/mirror/row-values.js';
import { createTableStatements } from '../../../src/mirror/table-ddl.js';
import { bulkAdd, emulatorAdminEnv } from '../../emulator-control.js';
import type { ServerStats } from '../cases/case-server.js';
import { Child } from '../ipc.js';
import { startRedis } from '../redis.js';
import { copyWithOgr2ogr } from './ogr2ogr-peer.js';

/** What `npm run bench -- --mirror` prints under `mirror`. */
export interface MirrorResult {
  features: number;
  /** From geohook's server started (MIRROR on Parcels) to the initial copy committed with its generation. */
  copySeconds: number;
  rowsPerSec: number;
  /** The floor: the same rows, read and encoded as COPY text beforehand, written with one `COPY` into a table of the same shape. */
  copyFloorSeconds: number;
  copyFloorPerSec: number;
  /** rowsPerSec / copyFloorPerSec. */
  vsCopy: number;
  /**
   * CPU per row copied, µs, from geohook's server ready to the copy committed: the server's (its threads included)
   * and the emulator's (answering the pages). Unlike the times, hardly moved by a busy machine.
   */
  copyCpuUsPerRow: { server: number; emulator: number };
  /** The peer a GIS user would run instead: GDAL's `ogr2ogr` copying the same layer into the same PostGIS, as a whole command. */
  ogr2ogrSeconds?: number;
  ogr2ogrRowsPerSec?: number;
  /** rowsPerSec / ogr2ogrRowsPerSec. */
  vsOgr2ogr?: number;
  /** Why there is no ogr2ogr figure (GDAL not installed). */
  ogr2ogrSkipped?: string;
  /** Single updates made with the JS client's `applyEdits`, one after the other, each timed to its row committed. */
  edits: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface MirrorSettings {
  features: number;
  edits: number;
}

const SERVICE = 'Hosted/Parcels.FeatureServer';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;

/** Polls `check` every few milliseconds until it is true, within `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, intervalMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`mirror: ${what} not within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/** Every feature of Parcels, read with `query` (not timed: the floor's input). */
async function readAll(serviceUrl: string, token: string): Promise<EsriFeature[]> {
  const features: EsriFeature[] = [];
  for (let last = 0; ;) {
    const params = new URLSearchParams({ f: 'json', token, where: `objectid > ${last}`, outFields: '*', orderByFields: 'objectid' });
    const page = ((await (await fetch(`${serviceUrl}/0/query?${params}`)).json()) as { features: EsriFeature[] }).features;
    if (page.length === 0) return features;
    features.push(...page);
    last = page.at(-1)!.attributes.objectid as number;
  }
}

/**
 * The mirror under volume and one edit at a time: the emulator's Parcels with `features` parcels (one bulk), a durable
 * PostgreSQL of its own, and geohook's server (`startServer` with MIRROR on Parcels, registered) in a process of its
 * own. The initial copy is timed until `mirror_state` holds the layer; the floor is a bare `COPY` of the same rows on
 * the same PostgreSQL; then single updates, each timed from `applyEdits` to its row seen committed.
 */
export async function runMirror(settings: MirrorSettings, log: (line: string) => void): Promise<MirrorResult> {
  const redis = await startRedis('fast');
  const emulator = await Child.start<{ port: number }>('emulator', 'workers/emulator.js');
  const dir = mkdtempSync(join(tmpdir(), 'geohook-bench-pg-'));
  const postgres = await startPostgresServer({ dir });
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  // PostGIS installed beforehand, as a database's administrator installs it: creating the extension (tens of ms) is
  // no part of a copy, and the floor and ogr2ogr, which come after geohook, would find it installed.
  await client.query('CREATE EXTENSION IF NOT EXISTS postgis');
  let server: Child<{ url: string }> | undefined;
  try {
    const root = `http://127.0.0.1:${emulator.ready.port}`;
    const serviceUrl = `${root}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
    await bulkAdd(root, SERVICE, settings.features);
    const env = {
      REDIS_URL: redis.url,
      HOST: '127.0.0.1',
      PORT: String(await findFreePort()),
      ...emulatorAdminEnv(root),
      REGISTER: SERVICE,
      MIRROR: SERVICE,
      MIRROR_DATABASE_URL: postgres.url,
      GEOHOOK_PREFIX: 'bench-mirror',
      LOG_LEVEL: 'silent',
    };
    log(`mirror: the initial copy of ${settings.features.toLocaleString('en-US')} parcels into PostGIS`);
    const emulatorBefore = await emulator.call<ServerStats>('stats');
    server = await Child.start<{ url: string }>('geohook server', 'workers/geohook-server.js', { args: [JSON.stringify(env)] });
    const copyStartedAt = performance.now();
    const serverBefore = await server.call<ServerStats>('stats');
    const copied = async (): Promise<boolean> =>
      (await client.query('SELECT 1 FROM geohook.mirror_state WHERE layer = 0').catch(() => ({ rowCount: 0 }))).rowCount === 1;
    await until('the initial copy', copied, Math.max(120_000, settings.features * 3), 20);
    const copySeconds = (performance.now() - copyStartedAt) / 1000;
    const cpuUsPerRow = (before: ServerStats, after: ServerStats): number => ((after.cpuMs - before.cpuMs) * 1000) / settings.features;
    const copyCpuUsPerRow = {
      server: cpuUsPerRow(serverBefore, await server.call<ServerStats>('stats')),
      emulator: cpuUsPerRow(emulatorBefore, await emulator.call<ServerStats>('stats')),
    };

    log('mirror: the floor: the same rows, in memory, with one COPY into a table of the same shape');
    const token = await emulatorToken(root);
    const features = await readAll(serviceUrl, token);
    const layer = (await (await fetch(`${serviceUrl}/0?f=json&token=${token}`)).json()) as MirrorLayer;
    await client.query('CREATE SCHEMA floor');
    for (const statement of createTableStatements('floor', 'parcels', layer)) await client.query(statement);
    const columns = rowColumnsOf(layer);
    const chunks: string[] = [];
    for (let start = 0; start < features.length; start += 500) {
      chunks.push(
        features
          .slice(start, start + 500)
          .map((feature) => copyLine(columns.values(feature)))
          .join(''),
      );
    }
    const sql = `COPY floor.parcels (${columns.names.map(quoteIdentifier).join(', ')}) FROM STDIN`;
    const floorStartedAt = performance.now();
    await client.query('BEGIN');
    await pipeline(Readable.from(chunks), client.query(copyFrom(sql)));
    await client.query('COMMIT');
    const copyFloorSeconds = (performance.now() - floorStartedAt) / 1000;

    log('mirror: the peer: ogr2ogr copying the same layer into the same PostGIS');
    const ogr2ogr = await copyWithOgr2ogr({ layerUrl: `${serviceUrl}/0`, token, postgresUrl: postgres.url, schema: 'ogr', client });
    if ('rows' in ogr2ogr && ogr2ogr.rows !== features.length)
      throw new Error(`mirror: ogr2ogr copied ${ogr2ogr.rows} of ${features.length} parcels`);

    log(`mirror: ${settings.edits} single updates, each timed from applyEdits to its row committed`);
    const authentication = ApiKeyManager.fromKey(token);
    const latencies: number[] = [];
    for (let index = 1; index <= settings.edits; index += 1) {
      const owner = `bench-${index}`;
      const startedAt = performance.now();
      await applyEdits({ url: `${serviceUrl}/0`, authentication, updates: [{ attributes: { objectid: index, owner } }] });
      const landed = async (): Promise<boolean> =>
        (await client.query('SELECT 1 FROM geohook.parcels_parcels WHERE objectid = $1 AND owner = $2', [index, owner])).rowCount === 1;
      await until(`edit ${index}`, landed, 30_000);
      latencies.push(performance.now() - startedAt);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const rowsPerSec = settings.features / copySeconds;
    const copyFloorPerSec = features.length / copyFloorSeconds;
    return {
      features: settings.features,
      copySeconds,
      rowsPerSec,
      copyFloorSeconds,
      copyFloorPerSec,
      vsCopy: rowsPerSec / copyFloorPerSec,
      copyCpuUsPerRow,
      ...('skipped' in ogr2ogr
        ? { ogr2ogrSkipped: ogr2ogr.skipped }
        : {
            ogr2ogrSeconds: ogr2ogr.seconds,
            ogr2ogrRowsPerSec: ogr2ogr.rows / ogr2ogr.seconds,
            vsOgr2ogr: rowsPerSec / (ogr2ogr.rows / ogr2ogr.seconds),
          }),
      edits: settings.edits,
      p50Ms: Math.round(percentile(sorted, 0.5)),
      p99Ms: Math.round(percentile(sorted, 0.99)),
      maxMs: Math.round(sorted.at(-1) ?? NaN),
    };
  } finally {
    await server?.close();
    await client.end();
    await postgres.stop('immediate');
    rmSync(dir, { recursive: true, force: true });
    await emulator.close();
    await redis.stop();
  }
}

async function emulatorToken(root: string): Promise<string> {
  const answer = await fetch(`${root}/arcgis/sharing/rest/generateToken`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: 'admin.pass', f: 'json' }),
  });
  return ((await answer.json()) as { token: string }).token;
}
