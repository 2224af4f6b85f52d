import type { AttributeValue, FieldDefinition } from './types.js';

/** Why a value cannot be set: an edit result's `error` (the feature service error codes). */
export interface EditError {
  code: number;
  description: string;
}

const INT_RANGES = {
  esriFieldTypeSmallInteger: [-32_768, 32_767],
  esriFieldTypeInteger: [-2_147_483_648, 2_147_483_647],
} as const;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const UUID = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `{XXXXXXXX-XXXX-…}` in upper case, the way ArcGIS writes GUID and GlobalID values; undefined for anything else. */
export function normalizeGuid(value: unknown): string | undefined {
  const match = typeof value === 'string' ? UUID.exec(value.trim()) : null;
  return match === null ? undefined : `{${match[1]!.toUpperCase()}}`;
}

function isDateOnly(value: string): boolean {
  const match = DATE_ONLY.exec(value);
  if (match === null) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().startsWith(value);
}

/** A value of a BigInteger field: a safe integer, a `bigint` or a string of digits, within 64 bits. */
function bigInteger(value: unknown): bigint | undefined {
  let big: bigint | undefined;
  if (typeof value === 'bigint') big = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) big = BigInt(value);
  else if (typeof value === 'string' && /^-?\d{1,20}$/.test(value.trim())) big = BigInt(value.trim());
  return big !== undefined && big >= INT64_MIN && big <= INT64_MAX ? big : undefined;
}

/** `value` as `field` stores it, or undefined when the field's type cannot hold it. */
function typed(field: FieldDefinition, value: unknown): AttributeValue | undefined {
  switch (field.type) {
    case 'esriFieldTypeString':
      return typeof value === 'string' && (field.length === undefined || value.length <= field.length) ? value : undefined;
    case 'esriFieldTypeSmallInteger':
    case 'esriFieldTypeInteger': {
      const [min, max] = INT_RANGES[field.type];
      const number = typeof value === 'bigint' ? Number(value) : value;
      return Number.isInteger(number) && (number as number) >= min && (number as number) <= max ? (number as number) : undefined;
    }
    case 'esriFieldTypeBigInteger':
      return bigInteger(value);
    case 'esriFieldTypeDouble':
      return typeof value === 'number' && Number.isFinite(value) ? value : typeof value === 'bigint' ? Number(value) : undefined;
    case 'esriFieldTypeDate':
      return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
    case 'esriFieldTypeDateOnly':
      return typeof value === 'string' && isDateOnly(value) ? value : undefined;
    case 'esriFieldTypeGUID':
    case 'esriFieldTypeGlobalID':
      return normalizeGuid(value);
    case 'esriFieldTypeOID':
      return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;
  }
}

/**
 * The value `field` stores for `value` as an edit gives it, or the edit error of the feature service: 1001 for a
 * null in a field that takes none, 1016 ("Setting of value for <field> failed.") for a value of the wrong type, too
 * long for the field, or outside its coded-value domain.
 */
export function fieldValue(field: FieldDefinition, value: unknown): { value: AttributeValue } | { error: EditError } {
  if (value === null || value === undefined) {
    return field.nullable
      ? { value: null }
      : { error: { code: 1001, description: `Field: ${field.name} is not nullable. Cannot set null value.` } };
  }
  const stored = typed(field, value);
  const inDomain = field.domain === null || field.domain.codedValues.some(({ code }) => code === stored);
  if (stored === undefined || !inDomain) return { error: { code: 1016, description: `Setting of value for ${field.name} failed.` } };
  return { value: stored };
}
