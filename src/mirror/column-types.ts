/** A field of a layer, as its REST resource lists it (the emulator's `FieldDefinition` is one). */
export interface MirrorField {
  name: string;
  /** The ArcGIS REST type, e.g. `esriFieldTypeString`. */
  type: string;
  /** Strings: the longest value, in characters (not enforced: the column is `text`). */
  length?: number;
}

/** A spatial reference as ArcGIS writes it. */
export interface MirrorSpatialReference {
  wkid?: number;
  latestWkid?: number;
}

/**
 * What the mirror needs of a layer (or table) to make its table: the parts of a layer resource it reads. The
 * emulator's `LayerDefinition` is one; `LayerInfo` (src/changes) lacks the geometry and spatial reference.
 */
export interface MirrorLayer {
  name: string;
  objectIdField: string;
  globalIdField?: string;
  fields: readonly MirrorField[];
  /** Absent for a table. */
  geometryType?: string;
  spatialReference?: MirrorSpatialReference;
  hasZ?: boolean;
  hasM?: boolean;
}

/** A layer's table in the mirror's schema: where its rows are written. */
export interface LayerTable {
  schema: string;
  table: string;
  layer: MirrorLayer;
}

/**
 * The PostgreSQL type of each ArcGIS field type. Coded-value domains change nothing: the column
 * holds the codes. String is `text` whatever its length (ArcGIS counts characters, and a later longer length
 * would need no `ALTER`).
 */
const COLUMN_TYPES: Readonly<Record<string, string>> = {
  esriFieldTypeOID: 'bigint',
  esriFieldTypeGlobalID: 'uuid',
  esriFieldTypeGUID: 'uuid',
  esriFieldTypeString: 'text',
  esriFieldTypeXML: 'text',
  esriFieldTypeSmallInteger: 'smallint',
  esriFieldTypeInteger: 'integer',
  esriFieldTypeBigInteger: 'bigint',
  esriFieldTypeSingle: 'real',
  esriFieldTypeDouble: 'double precision',
  esriFieldTypeDate: 'timestamptz',
  esriFieldTypeDateOnly: 'date',
  esriFieldTypeTimeOnly: 'time',
  esriFieldTypeTimestampOffset: 'timestamptz',
};

/**
 * The PostgreSQL column type of an ArcGIS field type, or `undefined` for a field the mirror does not keep as a
 * column: the geometry field (the table's `shape` holds it), Blob and Raster.
 */
export function columnTypeOf(fieldType: string): string | undefined {
  return Object.hasOwn(COLUMN_TYPES, fieldType) ? COLUMN_TYPES[fieldType] : undefined;
}

/** A layer's fields that have a column, each with its PostgreSQL type, in the layer's order. */
export function mirroredColumns(layer: Pick<MirrorLayer, 'fields'>): { field: MirrorField; sqlType: string }[] {
  return layer.fields.flatMap((field) => {
    const sqlType = columnTypeOf(field.type);
    return sqlType === undefined ? [] : [{ field, sqlType }];
  });
}

/**
 * An identifier quoted for SQL: in double quotes, inner double quotes doubled (as pg's `escapeIdentifier`), so
 * that any field or layer name is one identifier. Throws on a NUL character, which PostgreSQL cannot hold.
 */
export function quoteIdentifier(name: string): string {
  if (name === '' || name.includes('\0')) throw new TypeError(`not a usable SQL identifier: ${JSON.stringify(name)}`);
  return `"${name.replaceAll('"', '""')}"`;
}

/** `schema.table`, both quoted. */
export const qualifiedName = (schema: string, table: string): string => `${quoteIdentifier(schema)}.${quoteIdentifier(table)}`;

/** PostgreSQL's longest identifier, in bytes. */
const MAX_IDENTIFIER_BYTES = 63;

/** A 32-bit FNV-1a digest of `text`, as 8 hex digits. */
export function digestOf(text: string): string {
  let hash = 0x811c9dc5;
  for (const char of text) hash = Math.imul(hash ^ char.codePointAt(0)!, 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}

/** `name` followed by `suffix`, the end of `name` cut so that the whole fits PostgreSQL's 63 bytes. */
export function identifierWithSuffix(name: string, suffix: string): string {
  let head = name;
  while (Buffer.byteLength(head) > MAX_IDENTIFIER_BYTES - Buffer.byteLength(suffix)) head = head.slice(0, -1);
  return head + suffix;
}

/**
 * The plain table name of a layer: `<service>_<layer name>` in lower case, the service without its folder
 * (`Hosted/Parcels`, `Parcels` → `parcels_parcels`), characters other than letters, digits and `_` made `_`;
 * at most 63 bytes (PostgreSQL's limit), cut with a digest of the full name so that two long names stay apart.
 * Several layers may have the same plain name: see `assign-tables.ts` for the name a layer's table gets.
 */
export function tableNameOf(serviceName: string, layerName: string): string {
  const service = serviceName.split('/').at(-1) ?? serviceName;
  const name = `${service}_${layerName}`.toLowerCase().replace(/[^\p{L}\p{N}_]/gu, '_');
  return Buffer.byteLength(name) <= MAX_IDENTIFIER_BYTES ? name : identifierWithSuffix(name, `_${digestOf(name)}`);
}

/** Text of a GUID/GlobalID without its braces (PostgreSQL reads `{…}` too; plain is what it prints). */
const guidText = (value: string): string => (value.startsWith('{') && value.endsWith('}') ? value.slice(1, -1) : value);

/** An attribute value's text in a column, or `null` (see {@link toColumnText}). */
export type ColumnText = (value: unknown) => string | null;

/** Epoch milliseconds as ISO 8601 UTC, the last one remembered (rows written together often share their dates); other values as `other` writes them. */
function dateText(other: ColumnText): ColumnText {
  let lastValue: number | undefined;
  let lastText = '';
  return (value) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return other(value);
    if (value !== lastValue) [lastValue, lastText] = [value, new Date(value).toISOString()];
    return lastText;
  };
}

/**
 * The encoder of a field type's values into the text PostgreSQL's input of its column reads (see
 * {@link toColumnText}), made once per column: a row's values are encoded without looking their types up.
 */
export function columnTextOf(fieldType: string): ColumnText {
  const guid = fieldType === 'esriFieldTypeGUID' || fieldType === 'esriFieldTypeGlobalID';
  const floating = fieldType === 'esriFieldTypeDouble' || fieldType === 'esriFieldTypeSingle';
  const text: ColumnText = (value) => {
    if (value === null || value === undefined) return null;
    switch (typeof value) {
      case 'string':
        return guid ? guidText(value) : value;
      case 'number':
        return Number.isFinite(value) || floating ? String(value) : null;
      case 'bigint':
        return value.toString();
      default:
        throw new TypeError(`field type ${fieldType}: a value of type ${typeof value} has no column text`);
    }
  };
  return fieldType === 'esriFieldTypeDate' || fieldType === 'esriFieldTypeTimestampOffset' ? dateText(text) : text;
}

/**
 * An attribute value as PostgreSQL's text input of the field's column reads it, or `null`: Date (epoch
 * milliseconds) as ISO 8601 UTC, BigInteger exactly (a `bigint`, or the decimal string change events carry),
 * GUIDs without braces, other values as their text. Strings that are already text (DateOnly `YYYY-MM-DD`,
 * TimeOnly, TimestampOffset with its offset) pass unchanged.
 */
export const toColumnText = (fieldType: string, value: unknown): string | null => columnTextOf(fieldType)(value);
