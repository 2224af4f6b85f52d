/** A value the admin API takes as a form field, before encoding. */
export type ParamValue = string | number | boolean | object | null | undefined;

/** Parameters of one admin operation. */
export type AdminParams = Readonly<Record<string, ParamValue>>;

const isPrimitive = (value: unknown): value is string | number | boolean =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/** One value as the admin API reads it, or undefined when it is not sent. */
function encodeValue(value: ParamValue): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // Arrays of strings (and other plain values) are comma lists, as the ArcGIS API for Python sends changeTypes.
  if (Array.isArray(value) && value.every(isPrimitive)) return value.map(String).join(',');
  return JSON.stringify(value);
}

/**
 * The one place parameters become form fields: objects and arrays of objects become JSON, arrays of strings
 * comma lists, booleans `true`/`false`, numbers their decimal text; `undefined` and `null` are dropped.
 * `f` is always `json`, whatever `params` says, so every answer can be checked the same way.
 */
export function encodeParams(params: AdminParams = {}): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (name === 'f') continue;
    const encoded = encodeValue(value);
    if (encoded !== undefined) form.append(name, encoded);
  }
  form.set('f', 'json');
  return form;
}
