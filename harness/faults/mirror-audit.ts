import type pg from 'pg';
import type { EsriFeature } from '../../src/arcgis-request/extract-changes.js';
import { parseExactJson } from '../../src/arcgis-request/parse-exact-json.js';
import { qualifiedName, quoteIdentifier, type MirrorLayer } from '../../src/mirror/column-types.js';
import { copyRows } from '../../src/mirror/copy-rows.js';
import { rowColumnsOf } from '../../src/mirror/row-values.js';
import { createTableStatements, GEOMETRY_COLUMN, keyFieldOf } from '../../src/mirror/table-ddl.js';

type Json = Record<string, unknown>;

/** GETs a REST resource of the emulator (or any ArcGIS server) as JSON, with `token`. */
async function readJson(url: string, params: Record<string, string>, token: string): Promise<Json> {
  const answer = await fetch(`${url}?${new URLSearchParams({ f: 'json', token, ...params })}`);
  // BigInteger values beyond 2^53 stay exact, as geohook reads them.
  const body = parseExactJson(await answer.text()) as Json;
  if (body.error !== undefined) throw new Error(`${url}: ${JSON.stringify(body.error)}`);
  return body;
}

/** The layer's definition as its REST resource gives it (a {@link MirrorLayer}). */
export const layerResource = async (serviceUrl: string, layerId: number, token: string): Promise<MirrorLayer> =>
  (await readJson(`${serviceUrl}/${layerId}`, {}, token)) as unknown as MirrorLayer;

/** Each layer's server generation (`changeTrackingInfo.layerServerGens`), by layer id. */
export async function layerGenerations(serviceUrl: string, token: string): Promise<Map<number, number>> {
  const resource = await readJson(serviceUrl, {}, token);
  const gens = (resource.changeTrackingInfo as { layerServerGens: { id: number; serverGen: number }[] }).layerServerGens;
  return new Map(gens.map(({ id, serverGen }) => [id, serverGen]));
}

/** Every feature `query` answers (paged by object id), with `params` (an envelope, say). */
export async function queryFeatures(
  serviceUrl: string,
  layerId: number,
  token: string,
  params: Record<string, string> = {},
): Promise<EsriFeature[]> {
  const features: EsriFeature[] = [];
  for (let last = 0; ;) {
    const answer = await readJson(
      `${serviceUrl}/${layerId}/query`,
      { outFields: '*', returnGeometry: 'true', orderByFields: 'objectid', ...params, where: `objectid > ${last}` },
      token,
    );
    const page = answer.features as EsriFeature[];
    features.push(...page);
    if (page.length === 0 || answer.exceededTransferLimit !== true) return features;
    last = page.at(-1)!.attributes.objectid as number;
  }
}

/** A row where the mirror and the layer differ, by its key: missing from the table, extra in it, or changed. */
export interface MirrorDifference {
  key: string;
  kind: 'missing' | 'extra' | 'changed';
}

/**
 * The rows where the mirror's table and `features` (the layer as `query` answers it) differ: a row missing, a row
 * extra, a column of the layer's fields with another value, or a geometry not `ST_Equals`. The features are loaded
 * into a temporary table of the same columns, so that PostgreSQL compares typed values.
 */
export async function mirrorDifferences(
  client: pg.ClientBase,
  { schema, table, layer }: { schema: string; table: string; layer: MirrorLayer },
  features: readonly EsriFeature[],
): Promise<MirrorDifference[]> {
  const expected = `expected_${table}`.slice(0, 63);
  await client.query(`DROP TABLE IF EXISTS pg_temp.${quoteIdentifier(expected)}`);
  for (const statement of createTableStatements('pg_temp', expected, layer, { indexes: false })) await client.query(statement);
  await copyRows(client, { schema: 'pg_temp', table: expected, layer }, [features]);
  const key = quoteIdentifier(keyFieldOf(layer).name);
  const columns = rowColumnsOf(layer)
    .names.filter((name) => name !== GEOMETRY_COLUMN)
    .map(quoteIdentifier);
  const tuple = (alias: string): string => `(${columns.map((column) => `${alias}.${column}`).join(', ')})`;
  const shapes =
    layer.geometryType === undefined ? 'false' : `NOT coalesce(ST_Equals(a.shape, b.shape), a.shape IS NULL AND b.shape IS NULL)`;
  const { rows } = await client.query<MirrorDifference>(
    `SELECT coalesce(a.${key}, b.${key})::text AS key,
       CASE WHEN a.${key} IS NULL THEN 'missing' WHEN b.${key} IS NULL THEN 'extra' ELSE 'changed' END AS kind FROM ${qualifiedName(schema, table)} a
     FULL JOIN pg_temp.${quoteIdentifier(expected)} b ON a.${key} = b.${key}
     WHERE a.${key} IS NULL OR b.${key} IS NULL OR ${tuple('a')} IS DISTINCT FROM ${tuple('b')} OR ${shapes}
     ORDER BY 1`,
  );
  return rows;
}

/** The generation `mirror_state` records for each layer of `service`, by layer id. */
export async function mirrorGenerations(client: pg.ClientBase | pg.Pool, schema: string, service: string): Promise<Map<number, number>> {
  const { rows } = await client
    .query<{ layer: number; server_gen: string }>(
      `SELECT layer, server_gen FROM ${quoteIdentifier(schema)}.mirror_state WHERE service = $1`,
      [service],
    )
    .catch(() => ({ rows: [] }));
  return new Map(rows.map((row) => [row.layer, Number(row.server_gen)]));
}
