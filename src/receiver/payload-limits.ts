import { parse } from 'fast-querystring';

/** Most fields a form delivery may have; the GIS server's have one or two. */
export const MAX_FORM_FIELDS = 1000;

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
