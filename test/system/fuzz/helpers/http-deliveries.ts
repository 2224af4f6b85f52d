import { createHash } from 'node:crypto';
import { request, type Agent, type OutgoingHttpHeaders } from 'node:http';
import fc from 'fast-check';
import { TEST_KEY } from '../../../helpers/receiver.js';
import { formRecipeArb, makeFormDelivery, payloadArb } from './agol-forms.js';
import {
  decoyArb,
  decoyOf,
  HTTP_PLACEMENTS,
  place,
  signatureOf,
  SIGNATURE_HEADERS,
  sourceArb,
  type Placement,
} from './signature-headers.js';
import type { Verdict } from './signatures.js';

/**
 * Random deliveries to a real receiver (`MAX_BODY_BYTES` and `HTTP_KEYS`), each with every status the README's
 * table allows for it: bodies of every kind and size, content types, signatures as in signature-headers.ts.
 */
export const MAX_BODY_BYTES = 65_536;
export const HTTP_KEYS = [TEST_KEY, 'fuzz-second-key'];

const otherHeadersArb = fc
  .dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,12}$/), fc.string({ maxLength: 30 }), { maxKeys: 3 })
  .map((headers) =>
    Object.fromEntries(Object.entries(headers).filter(([name]) => !(SIGNATURE_HEADERS as readonly string[]).includes(name))),
  );

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'Application/Json; Charset=UTF-8',
  'application/json;charset=latin1',
  'application/json ; charset=utf-16',
];
const FORM_TYPES = [FORM, `${FORM}; charset=UTF-8`, FORM.toUpperCase()];
const OTHER_TYPES = [
  'text/plain',
  'text/json',
  'application/jsonx',
  'application/vnd.api+json',
  'application/xml',
  'multipart/form-data; boundary=x',
  'application/*',
  '*/*',
  'application/json, text/plain',
  'application/octet-stream',
  '',
];

interface Body {
  kind: string;
  bytes: Buffer;
  natural: 'json' | 'form';
  /** For forms signed in a field: that signature's value and verdict. */
  field?: { signature: string; verdict: Verdict };
}

const nested = (depth: number, arrays: boolean): string =>
  arrays ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
/** A body, shown short in fast-check's reports. */
const describedBody = (kind: string, natural: Body['natural'], bytes: Buffer, field?: Body['field']): Body =>
  Object.assign(
    { kind, natural, bytes, ...(field === undefined ? {} : { field }) },
    {
      [fc.toStringMethod]: () => `${kind} body of ${bytes.length} bytes: ${JSON.stringify(bytes.toString('latin1').slice(0, 200))}…`,
    },
  );
const body =
  (kind: string, natural: Body['natural']) =>
  (text: string | Uint8Array): Body =>
    describedBody(kind, natural, Buffer.from(text));
const depthArb = fc.oneof(fc.integer({ min: 60, max: 70 }), fc.integer({ min: 500, max: 5_000 }));

const bodyArb = (maxBytes: number): fc.Arbitrary<Body> =>
  fc.oneof(
    { weight: 4, arbitrary: payloadArb.map(body('event', 'json')) },
    fc.json({ maxDepth: 4 }).map(body('json', 'json')),
    fc.tuple(depthArb, fc.boolean()).map(([depth, arrays]) => body('deep', 'json')(nested(depth, arrays))),
    fc
      .constantFrom('{"__proto__":{"polluted":1}}', '{"a":{"constructor":{"prototype":{"polluted":1}}}}', '{"constructor":1}')
      .map(body('proto', 'json')),
    fc.string({ unit: 'binary', maxLength: 300 }).map(body('text', 'json')),
    fc.uint8Array({ maxLength: 3_000 }).map(body('binary', 'json')),
    fc.constant('').map(body('empty', 'json')),
    fc.integer({ min: maxBytes - 6_000, max: maxBytes }).map((size) => body('big', 'json')(`["${'a'.repeat(size - 4)}"]`)),
    fc
      .integer({ min: 995, max: 1_005 })
      .map((fields) => body('manyFields', 'form')(Array.from({ length: fields }, (_, i) => `f${i}=1`).join('&'))),
    payloadArb.map((payload) => body('form', 'form')(`payload=${encodeURIComponent(payload)}`)),
    fc
      .tuple(depthArb, fc.boolean())
      .map(([depth, arrays]) => body('deepForm', 'form')(`payload=${encodeURIComponent(nested(depth, arrays))}`)),
    {
      weight: 3,
      arbitrary: formRecipeArb('ascii').map((recipe): Body => {
        const delivery = makeFormDelivery(recipe, HTTP_KEYS);
        return describedBody('agol', 'form', delivery.body, { signature: delivery.signature, verdict: delivery.verdict });
      }),
    },
  );

export const httpCaseArb = (maxBytes: number) =>
  fc.record({
    hook: fc.oneof({ weight: 30, arbitrary: fc.constant('default') }, fc.stringMatching(/^[A-Za-z0-9_-]{1,16}$/)),
    body: bodyArb(maxBytes),
    contentType: fc.oneof(
      { weight: 12, arbitrary: fc.constant('natural' as const) },
      fc.constantFrom(...OTHER_TYPES),
      fc.constant(undefined),
      fc.string({ maxLength: 40 }),
    ),
    typeVariant: fc.nat({ max: 5 }),
    source: sourceArb('ascii', 8_000),
    placement: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<Placement>('service', 'esri') }, fc.constantFrom(...HTTP_PLACEMENTS)),
    headerOnForm: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, fc.constant(true)),
    decoy: decoyArb,
    other: otherHeadersArb,
  });
export type HttpCase = ReturnType<typeof httpCaseArb> extends fc.Arbitrary<infer T> ? T : never;

export interface Prepared {
  url: string;
  headers: Record<string, string>;
  bytes: Buffer;
  allowed: readonly number[];
  forged: boolean;
}

const mediaTypeOf = (contentType: string | undefined): string => (contentType ?? '').split(';')[0]!.trim().toLowerCase();
/** `[` and `{`, also percent-encoded: at most this many levels of nesting. */
const openings = (text: string): number => (text.match(/[[{]|%5B|%7B/gi) ?? []).length;

/** 202 when the body parses and nests at most 64 deep, 400 when it does not (both when the cheap look cannot tell). */
function parsedStatuses(media: string, bytes: Buffer): readonly number[] {
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  // A form's fields sit one level down, in the envelope's payload object.
  const deepMaybe = openings(text) > (media === FORM ? 63 : 64);
  if (media === FORM) {
    if (text.length > 0 && text.split('&').length > 1_000) return [400];
    return deepMaybe ? [202, 400] : [202];
  }
  try {
    JSON.parse(text);
  } catch {
    return [400];
  }
  return deepMaybe || /__proto__|constructor/.test(text) ? [202, 400] : [202];
}

/** The request of a case and every status the receiver may answer it with. */
export function prepare(c: HttpCase): Prepared {
  const { bytes } = c.body;
  const contentType =
    c.contentType === 'natural'
      ? (c.body.natural === 'json' ? JSON_TYPES : FORM_TYPES)[
          c.typeVariant % (c.body.natural === 'json' ? JSON_TYPES.length : FORM_TYPES.length)
        ]
      : c.contentType;
  const media = mediaTypeOf(contentType);
  const fieldSigned = c.body.field !== undefined && !c.headerOnForm;
  const placed = place(fieldSigned ? 'none' : c.placement, signatureOf(c.source, HTTP_KEYS, bytes), decoyOf(c.decoy, HTTP_KEYS, bytes));
  let expected = placed.expected;
  // A signature field counts only when nothing is in the headers and the body is read as a form.
  if (expected === 'missing' && media === FORM && c.body.field !== undefined && c.body.field.signature !== '')
    expected = c.body.field.verdict;
  const headers: Record<string, string> = { ...c.other, ...(placed.headers as Record<string, string>) };
  if (contentType !== undefined) headers['content-type'] = contentType;

  const forged = expected === 'reject' || expected === 'missing';
  const signedStatuses = (parsed: readonly number[]): readonly number[] =>
    forged ? [401] : expected === 'either' ? [202, 400, 401] : parsed;
  let allowed: readonly number[];
  if (c.hook !== 'default') allowed = [404];
  // No content type at all: 415, also for an empty body, which no parser sees.
  else if (media !== 'application/json' && media !== FORM) allowed = [415];
  else if (bytes.length > MAX_BODY_BYTES) allowed = [413];
  else allowed = signedStatuses(parsedStatuses(media, bytes));
  // 503 (Redis did not answer in time) may stand in for any 202.
  if (allowed.includes(202)) allowed = [...allowed, 503];
  return { url: `/webhooks/${c.hook}`, headers, bytes, allowed, forged };
}

const CODES: Record<number, readonly string[]> = {
  400: ['GEOHOOK_ERR_BAD_PAYLOAD'],
  401: ['GEOHOOK_ERR_BAD_SIGNATURE', 'GEOHOOK_ERR_MISSING_SIGNATURE'],
  404: ['GEOHOOK_ERR_UNKNOWN_HOOK'],
  413: ['GEOHOOK_ERR_BODY_TOO_LARGE'],
  415: ['GEOHOOK_ERR_UNSUPPORTED_MEDIA_TYPE'],
  503: ['GEOHOOK_ERR_QUEUE_UNAVAILABLE', 'GEOHOOK_ERR_DURABILITY'],
};

/** Throws unless `status` and `text` answer `prepared` as the README's table says. */
export function check(prepared: Prepared, status: number, text: string): void {
  const where = `${prepared.url} ${JSON.stringify(prepared.headers).slice(0, 300)} ${prepared.bytes.length} bytes: ${prepared.bytes.toString('latin1').slice(0, 120)}`;
  if (status >= 500 && status !== 503) throw new Error(`${status} ${text.slice(0, 300)} for ${where}`);
  if (status >= 200 && status < 300 && prepared.forged) throw new Error(`a forged or unsigned delivery got ${status} for ${where}`);
  if (!prepared.allowed.includes(status))
    throw new Error(`${status} ${text.slice(0, 200)}, expected one of ${prepared.allowed.join(', ')} for ${where}`);
  if (/\n\s+at /.test(text)) throw new Error(`a stack trace in the answer for ${where}`);
  const answer = JSON.parse(text) as Record<string, unknown>;
  if (status === 202) {
    const id = createHash('sha256').update(prepared.bytes).digest('hex');
    if (answer.status !== 'accepted' || answer.id !== id || typeof answer.duplicate !== 'boolean')
      throw new Error(`not the 202 body: ${text}`);
  } else if (answer.statusCode !== status || !CODES[status]!.includes(answer.code as string) || typeof answer.message !== 'string') {
    throw new Error(`not the error shape of ${status}: ${text.slice(0, 300)}`);
  }
}

/** POSTs `prepared` to the receiver at `baseUrl` over real HTTP. */
export const post = (baseUrl: string, agent: Agent, prepared: Prepared): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    const headers: OutgoingHttpHeaders = { ...prepared.headers, 'content-length': prepared.bytes.length };
    const req = request(`${baseUrl}${prepared.url}`, { method: 'POST', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(prepared.bytes);
  });
