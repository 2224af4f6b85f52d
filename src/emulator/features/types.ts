/** The vocabulary of the emulator's feature store: layer definitions, fields, values and geometries as ArcGIS writes them. */

/** The field types the emulator's layers use (the ArcGIS REST names). */
export type FieldType =
  | 'esriFieldTypeOID'
  | 'esriFieldTypeGlobalID'
  | 'esriFieldTypeGUID'
  | 'esriFieldTypeString'
  | 'esriFieldTypeSmallInteger'
  | 'esriFieldTypeInteger'
  | 'esriFieldTypeBigInteger'
  | 'esriFieldTypeDouble'
  | 'esriFieldTypeDate'
  | 'esriFieldTypeDateOnly';

/** A coded-value domain: the only values a field takes, each with a name for people. */
export interface CodedValueDomain {
  type: 'codedValue';
  name: string;
  codedValues: { name: string; code: string | number }[];
}

/** One field of a layer, as its resource lists it. */
export interface FieldDefinition {
  name: string;
  type: FieldType;
  alias: string;
  /** Strings: the longest value, in characters. */
  length?: number;
  nullable: boolean;
  editable: boolean;
  domain: CodedValueDomain | null;
  defaultValue: null;
}

/**
 * An attribute value as the store keeps it: Date as epoch milliseconds, DateOnly as `YYYY-MM-DD`, GUID and
 * GlobalID as `{XXXXXXXX-…}` in upper case, BigInteger as a `bigint` (exact beyond 2^53; written to JSON as a bare
 * number).
 */
export type AttributeValue = string | number | bigint | null;

export type Attributes = Record<string, AttributeValue>;

export type GeometryType = 'esriGeometryPoint' | 'esriGeometryPolyline' | 'esriGeometryPolygon';

/** A spatial reference as ArcGIS writes it. */
export interface SpatialReference {
  wkid: number;
  latestWkid?: number;
}

export type { Envelope, Geometry, PointGeometry, PolygonGeometry, PolylineGeometry } from '../../arcgis/geometry.js';
import type { Geometry } from '../../arcgis/geometry.js';

/** A feature (or a table's row): its attributes and, in a feature layer, its geometry. */
export interface Feature {
  attributes: Attributes;
  geometry?: (Geometry & { spatialReference?: SpatialReference }) | null;
}

/** A relationship of a layer, as its resource lists it. */
export interface Relationship {
  id: number;
  name: string;
  relatedTableId: number;
  cardinality: 'esriRelCardinalityOneToMany' | 'esriRelCardinalityOneToOne';
  role: 'esriRelRoleOrigin' | 'esriRelRoleDestination';
  keyField: string;
  composite: boolean;
}

/** Editor tracking: the fields each edit fills with the editing user and the emulator's clock. */
export interface EditFieldsInfo {
  creationDateField: string;
  creatorField: string;
  editDateField: string;
  editorField: string;
}

/** A layer (`type: 'Feature Layer'`, with a geometry) or a table (`type: 'Table'`) of a feature service. */
export interface LayerDefinition {
  id: number;
  name: string;
  type: 'Feature Layer' | 'Table';
  /** Feature layers only. */
  geometryType?: GeometryType;
  /** Feature layers only: the spatial reference its geometries are stored in. */
  spatialReference?: SpatialReference;
  objectIdField: string;
  globalIdField: string;
  fields: FieldDefinition[];
  editFieldsInfo?: EditFieldsInfo;
  relationships: Relationship[];
  maxRecordCount: number;
  /** Its features take attachments (`…/<oid>/attachments`, `addAttachment`, `attachments` in `applyEdits`). */
  hasAttachments?: boolean;
}
