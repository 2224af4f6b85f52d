import type { CodedValueDomain, EditFieldsInfo, FieldDefinition, FieldType, LayerDefinition } from './types.js';

/** Rows a query answers at most, unless a layer says otherwise (ArcGIS's usual `maxRecordCount`). */
export const DEFAULT_MAX_RECORD_COUNT = 2000;

/** A field as a layer resource lists it: nullable and editable unless said otherwise. */
export function field(name: string, type: FieldType, options: Partial<Omit<FieldDefinition, 'name' | 'type'>> = {}): FieldDefinition {
  const system = type === 'esriFieldTypeOID' || type === 'esriFieldTypeGlobalID';
  return {
    name,
    type,
    alias: options.alias ?? name,
    ...(type === 'esriFieldTypeGlobalID' ? { length: 38 } : {}),
    ...(options.length === undefined ? {} : { length: options.length }),
    nullable: options.nullable ?? !system,
    editable: options.editable ?? !system,
    domain: options.domain ?? null,
    defaultValue: null,
  };
}

/** The editor-tracking fields of hosted layers and the `editFieldsInfo` naming them. */
const EDIT_FIELDS_INFO: EditFieldsInfo = {
  creationDateField: 'created_date',
  creatorField: 'created_user',
  editDateField: 'last_edited_date',
  editorField: 'last_edited_user',
};

const editorTrackingFields = (): FieldDefinition[] => [
  field('created_user', 'esriFieldTypeString', { length: 255, editable: false }),
  field('created_date', 'esriFieldTypeDate', { length: 8, editable: false }),
  field('last_edited_user', 'esriFieldTypeString', { length: 255, editable: false }),
  field('last_edited_date', 'esriFieldTypeDate', { length: 8, editable: false }),
];

const parcelStatus: CodedValueDomain = {
  type: 'codedValue',
  name: 'ParcelStatus',
  codedValues: ['Open', 'Pending', 'Closed'].map((code) => ({ name: code, code })),
};

const WEB_MERCATOR = { wkid: 102100, latestWkid: 3857 };

/**
 * Hosted/Parcels (docs/emulator.md#feature-services-with-features): layer 0 "Parcels" (polygons) and table 1
 * "Inspections", one parcel to many inspections, both taking attachments (photos).
 */
export function parcelsLayers(): LayerDefinition[] {
  return [
    {
      id: 0,
      name: 'Parcels',
      type: 'Feature Layer',
      geometryType: 'esriGeometryPolygon',
      spatialReference: { ...WEB_MERCATOR },
      objectIdField: 'objectid',
      globalIdField: 'globalid',
      fields: [
        field('objectid', 'esriFieldTypeOID'),
        field('globalid', 'esriFieldTypeGlobalID'),
        field('parcel_id', 'esriFieldTypeString', { length: 20 }),
        field('owner', 'esriFieldTypeString', { length: 100 }),
        field('status', 'esriFieldTypeString', { length: 10, domain: parcelStatus }),
        field('area_sqm', 'esriFieldTypeDouble'),
        field('assessed_value', 'esriFieldTypeBigInteger'),
        ...editorTrackingFields(),
      ],
      editFieldsInfo: { ...EDIT_FIELDS_INFO },
      relationships: [
        {
          id: 0,
          name: 'Parcels_Inspections',
          relatedTableId: 1,
          cardinality: 'esriRelCardinalityOneToMany',
          role: 'esriRelRoleOrigin',
          keyField: 'globalid',
          composite: false,
        },
      ],
      maxRecordCount: DEFAULT_MAX_RECORD_COUNT,
      hasAttachments: true,
    },
    {
      id: 1,
      name: 'Inspections',
      type: 'Table',
      objectIdField: 'objectid',
      globalIdField: 'globalid',
      fields: [
        field('objectid', 'esriFieldTypeOID'),
        field('globalid', 'esriFieldTypeGlobalID'),
        field('parcel_guid', 'esriFieldTypeGUID', { length: 38 }),
        field('inspector', 'esriFieldTypeString', { length: 50 }),
        field('result', 'esriFieldTypeString', { length: 20 }),
        field('inspected_on', 'esriFieldTypeDateOnly'),
        ...editorTrackingFields(),
      ],
      editFieldsInfo: { ...EDIT_FIELDS_INFO },
      relationships: [
        {
          id: 0,
          name: 'Parcels_Inspections',
          relatedTableId: 0,
          cardinality: 'esriRelCardinalityOneToMany',
          role: 'esriRelRoleDestination',
          keyField: 'parcel_guid',
          composite: false,
        },
      ],
      maxRecordCount: DEFAULT_MAX_RECORD_COUNT,
      hasAttachments: true,
    },
  ];
}

/** Hosted/Roads (docs/emulator.md#feature-services-with-features): layer 0 "Roads", polylines in WGS 84. */
export function roadsLayers(): LayerDefinition[] {
  return [
    {
      id: 0,
      name: 'Roads',
      type: 'Feature Layer',
      geometryType: 'esriGeometryPolyline',
      spatialReference: { wkid: 4326, latestWkid: 4326 },
      objectIdField: 'objectid',
      globalIdField: 'globalid',
      fields: [
        field('objectid', 'esriFieldTypeOID'),
        field('globalid', 'esriFieldTypeGlobalID'),
        field('name', 'esriFieldTypeString', { length: 100 }),
        field('lanes', 'esriFieldTypeSmallInteger'),
      ],
      relationships: [],
      maxRecordCount: DEFAULT_MAX_RECORD_COUNT,
    },
  ];
}

/** The layer of a feature service the catalogue gives no layers: points in WGS 84 with a name, named after the service. */
export function genericLayers(serviceName: string): LayerDefinition[] {
  return [
    {
      id: 0,
      name: serviceName,
      type: 'Feature Layer',
      geometryType: 'esriGeometryPoint',
      spatialReference: { wkid: 4326, latestWkid: 4326 },
      objectIdField: 'objectid',
      globalIdField: 'globalid',
      fields: [
        field('objectid', 'esriFieldTypeOID'),
        field('globalid', 'esriFieldTypeGlobalID'),
        field('name', 'esriFieldTypeString', { length: 100 }),
      ],
      relationships: [],
      maxRecordCount: DEFAULT_MAX_RECORD_COUNT,
    },
  ];
}
