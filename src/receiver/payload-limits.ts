import { parse } from 'fast-querystring';

/** Deepest nesting of arrays and objects a payload may have; the GIS server's go three or four deep. */
export const MAX_NESTING = 64;
/** Most fields a form delivery may have; the GIS server's have one or two. */
export const MAX_FORM_FIELDS = 1000;

/**
 * True when `value` nests arrays or objects deeper than `max`. The walk stops at `max + 1` levels, so a
 * hostile body cannot overflow the stack here (JSON.parse itself is iterative; JSON.stringify, used to
 * store the event, is not).
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (max === 0) return true;
  for (const child of Array.isArray(value) ? value : Object.values(value)) if (nestedDeeperThan(child, max - 1)) return true;
  return false;
}

/** A body-parse error: the route answers it 400 once the signature was judged (401 first). */
function parseError(message: string): Error & { statusCode: number } {
  return Object.assign(new Error(message), { statusCode: 400 });
}

/**
 * @fastify/formbody's parser with a field count limit, checked on the text before any field is decoded:
 * a form of a hundred thousand fields costs one scan, not a hundred thousand allocations.
 */
export function parseLimitedForm(text: string): Record<string, unknown> {
  let fields = text.length === 0 ? 0 : 1;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) {
    fields += 1;
    if (fields > MAX_FORM_FIELDS) throw parseError(`more than ${MAX_FORM_FIELDS} form fields`);
  }
  return parse(text) as Record<string, unknown>;
}
