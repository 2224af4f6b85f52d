import type { FormFields } from './form-fields.js';

const JSON_START = /^\s*[[{]/;

function parseJsonField(value: string): unknown {
  if (!JSON_START.test(value)) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/**
 * The envelope's `payload` for a form delivery: decoded fields, a field that holds JSON parsed, and the
 * signature fields left out (they are in `rawBody` already and are of no use to a consumer).
 */
export function formPayload(fields: FormFields, signatureFields: readonly string[]): Record<string, unknown> {
  const omitted = new Set(signatureFields);
  const payload: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (omitted.has(name.toLowerCase())) continue;
    payload[name] = Array.isArray(value) ? value.map(parseJsonField) : parseJsonField(value);
  }
  return payload;
}

/** What to classify: the `payload` field of a form delivery when it holds JSON, else the whole payload. */
export function classifiable(payload: unknown, isForm: boolean): unknown {
  if (isForm && typeof payload === 'object' && payload !== null && 'payload' in payload) {
    const inner = (payload as { payload: unknown }).payload;
    if (typeof inner === 'object' && inner !== null) return inner;
  }
  return payload;
}
