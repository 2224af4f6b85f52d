import { randomUUID } from 'node:crypto';
import type { Row } from './change-log.js';
import { normalizeWkid, project } from './geometry.js';
import type { AttributeValue, Feature, FieldDefinition, Geometry, LayerDefinition } from './types.js';

/** Redlands, California, in WGS 84: where sample features are put. */
const ORIGIN = { x: -117.1956, y: 34.0564 };
/** Degrees between neighbouring sample features, and a sample feature's size. */
const STEP = 0.001;
const SIZE = 0.0004;
const DAY_MS = 86_400_000;
const BASE_TIME = Date.UTC(2026, 0, 1);

function sampleValue(field: FieldDefinition, n: number): AttributeValue {
  if (field.domain !== null) return field.domain.codedValues[n % field.domain.codedValues.length]!.code;
  switch (field.type) {
    case 'esriFieldTypeString':
      return `${field.name} ${n}`.slice(0, field.length ?? 255);
    case 'esriFieldTypeSmallInteger':
      return (n % 4) + 1;
    case 'esriFieldTypeInteger':
      return n;
    case 'esriFieldTypeBigInteger':
      // Beyond 2^53, where a JSON number stops being exact.
      return 9_007_199_254_740_993n + BigInt(n);
    case 'esriFieldTypeDouble':
      return Math.round(n * 1234.5) / 10;
    case 'esriFieldTypeDate':
      return BASE_TIME + n * 60_000;
    case 'esriFieldTypeDateOnly':
      return new Date(BASE_TIME + (n % 365) * DAY_MS).toISOString().slice(0, 10);
    default:
      return `{${randomUUID().toUpperCase()}}`;
  }
}

/** The `n`th sample geometry of a layer, in its spatial reference: a point, a short line, or a small square. */
function sampleGeometry(layer: LayerDefinition, n: number): Geometry | undefined {
  if (layer.type === 'Table' || layer.geometryType === undefined) return undefined;
  const x = ORIGIN.x + (n % 1000) * STEP;
  const y = ORIGIN.y + Math.floor(n / 1000) * STEP;
  const wgs84: Geometry =
    layer.geometryType === 'esriGeometryPoint'
      ? { x, y }
      : layer.geometryType === 'esriGeometryPolyline'
        ? {
            paths: [
              [
                [x, y],
                [x + SIZE, y + SIZE],
              ],
            ],
          }
        : {
            rings: [
              [
                [x, y],
                [x, y + SIZE],
                [x + SIZE, y + SIZE],
                [x + SIZE, y],
                [x, y],
              ],
            ],
          };
  return layer.spatialReference === undefined ? wgs84 : project(wgs84, 4326, normalizeWkid(layer.spatialReference), 'outSR');
}

/** The `n`th sample feature of a layer, as an edit adds it: a value for each editable field, and a geometry. */
export function sampleFeature(layer: LayerDefinition, n: number): Feature {
  const attributes = Object.fromEntries(layer.fields.filter((field) => field.editable).map((field) => [field.name, sampleValue(field, n)]));
  const geometry = sampleGeometry(layer, n);
  return geometry === undefined ? { attributes } : { attributes, geometry };
}

/**
 * A sample update of `row`: its first coded-value field moved to the next code, else its first editable text field
 * rewritten, else its geometry moved a step.
 */
export function sampleUpdate(layer: LayerDefinition, row: Row): Feature {
  const key = { [layer.objectIdField]: row.attributes[layer.objectIdField] ?? null };
  const editable = layer.fields.filter((field) => field.editable);
  const coded = editable.find((field) => field.domain !== null);
  if (coded?.domain) {
    const codes = coded.domain.codedValues.map(({ code }) => code);
    return { attributes: { ...key, [coded.name]: codes[(codes.indexOf(row.attributes[coded.name] as string) + 1) % codes.length]! } };
  }
  const text = editable.find((field) => field.type === 'esriFieldTypeString');
  if (text !== undefined) return { attributes: { ...key, [text.name]: `edited ${Date.now() % 100_000}`.slice(0, text.length ?? 255) } };
  const geometry = row.geometry !== null && 'x' in row.geometry ? { ...row.geometry, x: row.geometry.x + STEP } : row.geometry;
  return { attributes: key, geometry };
}
