import type { FormFields } from './form-fields.js';
import { parseFormField } from './parse-payload.js';

/**
 * The envelope's `payload` for a form delivery: decoded fields, a field that holds JSON parsed, and the
 * signature fields left out (they are in `rawBody` already and are of no use to a consumer). Throws
 * `GEOHOOK_ERR_BAD_PAYLOAD` for a field nested too deep.
 */
export function formPayload(fields: FormFields, signatureFields: readonly string[]): Record<string, unknown> {
  const omitted = new Set(signatureFields);
  const payload: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (omitted.has(name.toLowerCase())) continue;
    payload[name] = Array.isArray(value) ? value.map(parseFormField) : parseFormField(value);
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
