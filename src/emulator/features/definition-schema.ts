import { z } from 'zod';
import { field, DEFAULT_MAX_RECORD_COUNT } from './layer-schemas.js';
import type { FieldDefinition, FieldType, LayerDefinition } from './types.js';

const fieldTypes = [
  'esriFieldTypeOID',
  'esriFieldTypeGlobalID',
  'esriFieldTypeGUID',
  'esriFieldTypeString',
  'esriFieldTypeSmallInteger',
  'esriFieldTypeInteger',
  'esriFieldTypeBigInteger',
  'esriFieldTypeDouble',
  'esriFieldTypeDate',
  'esriFieldTypeDateOnly',
] as const satisfies readonly FieldType[];

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const domainSchema = z
  .object({
    type: z.literal('codedValue'),
    name: z.string().min(1),
    codedValues: z.array(z.object({ name: z.string(), code: z.union([z.string(), z.number()]) })).min(1),
  })
  .strip();

/** A field as a catalogue file or `addToDefinition` gives it; alias, nullable and editable default as ArcGIS does. */
export const fieldSchema = z
  .object({
    name: z.string().regex(NAME, 'a letter or "_", then letters, digits or "_" (64 at most)'),
    type: z.enum(fieldTypes),
    alias: z.string().optional(),
    length: z.number().int().positive().optional(),
    nullable: z.boolean().optional(),
    editable: z.boolean().optional(),
    domain: domainSchema.nullable().optional(),
  })
  .strip()
  .transform(({ name, type, ...options }): FieldDefinition =>
    field(name, type, Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<FieldDefinition>),
  );

const spatialReferenceSchema = z
  .object({ wkid: z.union([z.literal(4326), z.literal(3857), z.literal(102100)]), latestWkid: z.number().int().optional() })
  .strip();

/** A layer or table as a catalogue file (or a service-level `addToDefinition`) gives it. */
export const layerSchema = z
  .object({
    id: z.number().int().min(0),
    name: z.string().min(1),
    type: z.enum(['Feature Layer', 'Table']).default('Feature Layer'),
    geometryType: z.enum(['esriGeometryPoint', 'esriGeometryPolyline', 'esriGeometryPolygon']).optional(),
    spatialReference: spatialReferenceSchema.optional(),
    objectIdField: z.string().default('objectid'),
    globalIdField: z.string().default('globalid'),
    fields: z.array(fieldSchema).min(1),
    editFieldsInfo: z
      .object({ creationDateField: z.string(), creatorField: z.string(), editDateField: z.string(), editorField: z.string() })
      .strip()
      .optional(),
    relationships: z.array(z.any()).default([]),
    maxRecordCount: z.number().int().positive().default(DEFAULT_MAX_RECORD_COUNT),
    hasAttachments: z.boolean().optional(),
  })
  .strip()
  .superRefine((layer, issues) => {
    const has = (name: string, type: FieldType) => layer.fields.some((candidate) => candidate.name === name && candidate.type === type);
    if (!has(layer.objectIdField, 'esriFieldTypeOID'))
      issues.addIssue({ code: 'custom', message: `needs an esriFieldTypeOID field named ${layer.objectIdField}` });
    if (!has(layer.globalIdField, 'esriFieldTypeGlobalID'))
      issues.addIssue({ code: 'custom', message: `needs an esriFieldTypeGlobalID field named ${layer.globalIdField}` });
    if (layer.type === 'Feature Layer' && (layer.geometryType === undefined || layer.spatialReference === undefined)) {
      issues.addIssue({ code: 'custom', message: 'a feature layer needs geometryType and spatialReference' });
    }
  })
  .transform((layer) => layer as LayerDefinition);
