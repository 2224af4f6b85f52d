/**
 * What a comparison compares in: numbers (`number` or `bigint`, compared exactly), case-sensitive text, GUIDs
 * (`{UPPER-CASE}` text) or instants (epoch milliseconds, UTC).
 */
export type Domain = 'number' | 'text' | 'guid' | 'time';

/** A value in its domain, ready for `<`, `>` and equality. */
export type Comparable = string | number | bigint;

const FIELD_DOMAINS: Readonly<Record<string, Domain>> = {
  esriFieldTypeOID: 'number',
  esriFieldTypeSmallInteger: 'number',
  esriFieldTypeInteger: 'number',
  esriFieldTypeBigInteger: 'number',
  esriFieldTypeDouble: 'number',
  esriFieldTypeSingle: 'number',
  esriFieldTypeString: 'text',
  esriFieldTypeGUID: 'guid',
  esriFieldTypeGlobalID: 'guid',
  esriFieldTypeDate: 'time',
  esriFieldTypeDateOnly: 'time',
};

/** The domain a field of `type` (an ArcGIS field type) compares in: text for types it has no other for. */
export const fieldDomain = (type: string): Domain => FIELD_DOMAINS[type] ?? 'text';

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** One form per number: integers beyond ±(2^53 − 1) as `bigint`, all others as `number` (so a Set finds 5 and 5n alike). */
export function canonicalNumber(value: number | bigint): number | bigint {
  if (typeof value === 'bigint') return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value;
  return Number.isInteger(value) && !Number.isSafeInteger(value) ? BigInt(value) : value;
}

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

/** A number written in SQL (an optional sign, digits, a fraction, an exponent), integers exactly; undefined when it is not one. */
export function parseNumber(text: string): number | bigint | undefined {
  const trimmed = text.trim();
  if (!NUMERIC.test(trimmed)) return undefined;
  return INTEGER.test(trimmed) ? canonicalNumber(BigInt(trimmed)) : Number(trimmed);
}

const INSTANT = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?)?$/;

/**
 * `YYYY-MM-DD`, optionally followed by ` HH:MI`, `:SS` and `.fff`, read as UTC: epoch milliseconds, or undefined
 * when it is not that or names no real moment (2023-02-30, 24:00).
 */
export function parseInstant(text: string): number | undefined {
  const parts = INSTANT.exec(text.trim());
  if (parts === null) return undefined;
  const [, day, hours = '00', minutes = '00', seconds = '00', fraction = ''] = parts;
  const iso = `${day}T${hours}:${minutes}:${seconds}`;
  const time = Date.parse(`${iso}.${fraction.padEnd(3, '0')}Z`);
  return Number.isNaN(time) || new Date(time).toISOString().slice(0, 19) !== iso ? undefined : time;
}

/** A GUID as the store keeps it: upper case, in braces, whether or not `text` had them. */
export const normalizeGuid = (text: string): string =>
  `{${text
    .trim()
    .replace(/^\{|\}$/g, '')
    .toUpperCase()}}`;
