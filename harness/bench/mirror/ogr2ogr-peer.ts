import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type pg from 'pg';

const run = promisify(execFile);

/** GDAL's `ogr2ogr` copying a layer into PostGIS, timed from the command's start to its exit. */
export type Ogr2ogrCopy = { rows: number; seconds: number } | { skipped: string };

export interface Ogr2ogrOptions {
  /** The layer's URL (`…/FeatureServer/0`). */
  layerUrl: string;
  token: string;
  /** The PostgreSQL to copy into (`postgres://user:password@host:port/db`). */
  postgresUrl: string;
  /** An empty schema of that database for the table (`<schema>.parcels`). */
  schema: string;
  client: pg.Client;
}

/** The version `ogr2ogr --version` prints, or undefined when GDAL is not installed. */
async function gdalVersion(): Promise<string | undefined> {
  try {
    return (await run('ogr2ogr', ['--version'])).stdout.trim();
  } catch {
    return undefined;
  }
}

/**
 * What a GIS user runs to copy a FeatureServer layer into PostGIS: `ogr2ogr` with GDAL's ESRIJSON driver reading
 * `query` page by page (ordered by object id, the page size the layer allows) and the PostgreSQL driver writing with
 * `COPY` (`PG_USE_COPY=YES`), its other settings left as GDAL sets them (a GiST index on the geometry, as the mirror
 * makes). Timed as a whole command; the table is then counted.
 */
export async function copyWithOgr2ogr(options: Ogr2ogrOptions): Promise<Ogr2ogrCopy> {
  if ((await gdalVersion()) === undefined) return { skipped: 'ogr2ogr not found (install gdal-bin)' };
  const database = new URL(options.postgresUrl);
  const source = new URL(`${options.layerUrl}/query`);
  source.search = new URLSearchParams({
    where: '1=1',
    outFields: '*',
    orderByFields: 'objectid',
    f: 'json',
    token: options.token,
  }).toString();
  await options.client.query(`CREATE SCHEMA ${options.schema}`);
  const startedAt = performance.now();
  await run(
    'ogr2ogr',
    [
      '-f',
      'PostgreSQL',
      `PG:host=${database.hostname} port=${database.port} dbname=${database.pathname.slice(1)} user=${decodeURIComponent(database.username)}`,
      `ESRIJSON:${source}`,
      '-nln',
      `${options.schema}.parcels`,
      '--config',
      'PG_USE_COPY',
      'YES',
    ],
    { env: { ...process.env, PGPASSWORD: decodeURIComponent(database.password) }, maxBuffer: 16 * 1024 * 1024 },
  );
  const seconds = (performance.now() - startedAt) / 1000;
  const counted = await options.client.query<{ rows: string }>(`SELECT count(*) AS rows FROM ${options.schema}.parcels`);
  return { rows: Number(counted.rows[0]!.rows), seconds };
}
