import { GeohookError } from '../errors.js';
import { columnTextOf, mirroredColumns, type MirrorLayer } from './column-types.js';
import { toEwkbHex } from './esri-geometry.js';
import { GEOMETRY_COLUMN, geometryTargetOf } from './table-ddl.js';

/** A row as Esri JSON carries it (a feature, or a change event's `after`). */
export interface EsriRow {
  attributes: Record<string, unknown>;
  geometry?: unknown;
}

/** A layer table's columns, in order, and how a row becomes their text values. */
export interface RowColumns {
  /** Column names (field names, then `shape` in a feature layer). */
  names: string[];
  /** Each column's PostgreSQL type. */
  sqlTypes: string[];
  /**
   * A row's values in PostgreSQL's text input form (`null` for SQL NULL); a missing attribute is NULL. An error (a
   * geometry past the limits, a value the column cannot hold) names the feature by its object id.
   */
  values(row: EsriRow): (string | null)[];
}

/** An error of encoding a row, its message prefixed with the feature's object id; its class and code kept. */
function ofFeature(err: unknown, objectId: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const message = `feature ${String(objectId)}: ${err.message}`;
  if (err instanceof GeohookError) return new GeohookError(err.code, message, { cause: err });
  return err instanceof TypeError ? new TypeError(message, { cause: err }) : new Error(message, { cause: err });
}

/** The columns of a layer's table (as {@link createTableStatements} makes it) and the row encoder for them. */
export function rowColumnsOf(layer: MirrorLayer): RowColumns {
  const columns = mirroredColumns(layer);
  const target = geometryTargetOf(layer);
  const names = columns.map(({ field }) => field.name);
  const sqlTypes = columns.map(({ sqlType }) => sqlType);
  if (target !== undefined) {
    names.push(GEOMETRY_COLUMN);
    sqlTypes.push('geometry');
  }
  const encoders = columns.map(({ field }) => ({ name: field.name, text: columnTextOf(field.type) }));
  return {
    names,
    sqlTypes,
    values(row) {
      try {
        const values = encoders.map(({ name, text }) => text(row.attributes[name]));
        if (target !== undefined) values.push(toEwkbHex(row.geometry, target));
        return values;
      } catch (err) {
        throw ofFeature(err, row.attributes[layer.objectIdField]);
      }
    },
  };
}
