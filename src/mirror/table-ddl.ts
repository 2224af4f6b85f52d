import {
  columnTypeOf,
  digestOf,
  mirroredColumns,
  qualifiedName,
  quoteIdentifier,
  type MirrorField,
  type MirrorLayer,
} from './column-types.js';
import { postgisTypeOf, sridOf, type GeometryTarget } from './esri-geometry.js';

/** The column every mirrored feature layer keeps its geometry in. */
export const GEOMETRY_COLUMN = 'shape';

/** The table of each layer's server generation, in the mirror's schema. */
export const STATE_TABLE = 'mirror_state';

/** The column of a layer's primary key: its GlobalID field when it has one (that has a column), else its object id field. */
export function keyFieldOf(layer: MirrorLayer): MirrorField {
  const byName = (name: string | undefined): MirrorField | undefined =>
    name === undefined ? undefined : layer.fields.find((field) => field.name === name && columnTypeOf(field.type) !== undefined);
  const key = byName(layer.globalIdField) ?? byName(layer.objectIdField);
  if (key === undefined)
    throw new TypeError(`layer ${layer.name}: neither its GlobalID nor its object id field '${layer.objectIdField}' is among its fields`);
  return key;
}

/** The `shape` column's type, SRID and dimensions; `undefined` for a table (no geometry). */
export function geometryTargetOf(layer: MirrorLayer): GeometryTarget | undefined {
  if (layer.geometryType === undefined) return undefined;
  const type = postgisTypeOf(layer.geometryType);
  if (type === undefined) throw new TypeError(`layer ${layer.name}: geometry type ${layer.geometryType} cannot be mirrored`);
  return { type, srid: sridOf(layer.spatialReference), hasZ: layer.hasZ === true, hasM: layer.hasM === true };
}

/** The longest table name whose GiST index is named `<table>_shape_gist` as it is (the index name fits 63 bytes). */
const PLAIN_GIST_TABLE = 50;

/**
 * The name of a table's GiST index on `shape`: `<table>_shape_gist`; a longer table's name is cut and followed by its
 * digest, so that two tables whose names only differ past the cut get two indexes.
 */
export const gistIndexNameOf = (table: string): string =>
  table.length <= PLAIN_GIST_TABLE ? `${table}_shape_gist` : `${table.slice(0, PLAIN_GIST_TABLE - 9)}_${digestOf(table)}_shape_gist`;

/** `geometry(MultiPolygonZ, 3857)`: the PostGIS type modifier of a target. */
const geometrySqlType = (target: GeometryTarget): string =>
  `geometry(${target.type}${target.hasZ === true ? 'Z' : ''}${target.hasM === true ? 'M' : ''}, ${target.srid})`;

/** What {@link createTableStatements} makes besides the table. */
export interface CreateTableOptions {
  /**
   * Whether the primary key and the GiST index come with the table; without them, {@link tableIndexStatements} adds
   * them once the rows are in (a bulk load builds each index once instead of keeping it up to date row by row).
   * @defaultValue true
   */
  indexes?: boolean;
}

/** The GiST index on a feature layer's `shape`. */
const gistIndexStatement = (schema: string, table: string): string =>
  `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(gistIndexNameOf(table))} ON ${qualifiedName(schema, table)} USING GIST (${quoteIdentifier(GEOMETRY_COLUMN)})`;

/**
 * The statements that make a layer's table in `schema` (which must exist), each safe to run again: a column per
 * field with the PostgreSQL type of its ArcGIS type (fields without one are left out), the geometry as
 * `shape geometry(<Type>, <srid>)` for a feature layer, and (unless `indexes` is false) the primary key on the
 * GlobalID, else the object id, and a GiST index on `shape`.
 */
export function createTableStatements(schema: string, table: string, layer: MirrorLayer, options: CreateTableOptions = {}): string[] {
  const key = keyFieldOf(layer);
  const target = geometryTargetOf(layer);
  const columns = mirroredColumns(layer).map(({ field, sqlType }) => `${quoteIdentifier(field.name)} ${sqlType}`);
  if (target !== undefined) {
    if (layer.fields.some((field) => field.name === GEOMETRY_COLUMN && columnTypeOf(field.type) !== undefined)) {
      throw new TypeError(`layer ${layer.name}: a field named '${GEOMETRY_COLUMN}' would clash with the geometry column`);
    }
    columns.push(`${quoteIdentifier(GEOMETRY_COLUMN)} ${geometrySqlType(target)}`);
  }
  const indexes = options.indexes !== false;
  if (indexes) columns.push(`PRIMARY KEY (${quoteIdentifier(key.name)})`);
  const statements = [`CREATE TABLE IF NOT EXISTS ${qualifiedName(schema, table)} (\n  ${columns.join(',\n  ')}\n)`];
  if (indexes && target !== undefined) statements.push(gistIndexStatement(schema, table));
  return statements;
}

/**
 * The statements that give a table made by {@link createTableStatements} without `indexes` its primary key (named
 * `<table>_pkey`, as the inline one) and, for a feature layer, its GiST index on `shape`.
 */
export function tableIndexStatements(schema: string, table: string, layer: MirrorLayer): string[] {
  const key = `ALTER TABLE ${qualifiedName(schema, table)} ADD PRIMARY KEY (${quoteIdentifier(keyFieldOf(layer).name)})`;
  return geometryTargetOf(layer) === undefined ? [key] : [key, gistIndexStatement(schema, table)];
}

/**
 * The statements that make `schema` and its `mirror_state` table: one row per mirrored layer (`service` as
 * `Hosted/Parcels.FeatureServer`, `layer` its id), with the server generation its table equals and when that was
 * written.
 */
export function createStateStatements(schema: string): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(schema)}`,
    `CREATE TABLE IF NOT EXISTS ${qualifiedName(schema, STATE_TABLE)} (
  service text NOT NULL,
  layer integer NOT NULL,
  table_name text NOT NULL,
  server_gen bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (service, layer)
)`,
  ];
}

/**
 * The statement that adds a field's column to a layer's table when the layer gains it (ArcGIS `addToDefinition`);
 * `undefined` for a field that has no column. Safe to run again. A field the layer drops keeps its column, no
 * longer fed.
 */
export function addColumnStatement(schema: string, table: string, field: MirrorField): string | undefined {
  const sqlType = columnTypeOf(field.type);
  if (sqlType === undefined) return undefined;
  return `ALTER TABLE ${qualifiedName(schema, table)} ADD COLUMN IF NOT EXISTS ${quoteIdentifier(field.name)} ${sqlType}`;
}
