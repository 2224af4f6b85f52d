import { Agent } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import t from 'tap';
import type { HookConfig } from '../../../src/config/load-config.js';
import { authenticate, type AuthenticationResult, type SignaturePolicy } from '../../../src/receiver/authenticate.js';
import type { FormFields } from '../../../src/receiver/form-fields.js';
import { parseLimitedForm } from '../../../src/receiver/payload-limits.js';
import { startReceiver, TEST_KEY } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { formRecipeArb, makeFormDelivery, payloadArb } from './helpers/agol-forms.js';
import { check, HTTP_KEYS, httpCaseArb, MAX_BODY_BYTES, post, prepare } from './helpers/http-deliveries.js';
import { replayFromEnvironment } from './helpers/replay.js';
import { keyArb } from './helpers/signature-arbitraries.js';
import {
  decoyArb,
  decoyOf,
  place,
  signatureOf,
  SIGNATURE_HEADERS,
  sourceArb,
  type Expected,
  type Placement,
} from './helpers/signature-headers.js';
import { challengeShaped, contractSpelling, hmac } from './helpers/signatures.js';

/**
 * Property-based tests of the receiver's front door. Signatures are made by a model that knows
 * how each one was made (helpers/signatures.ts): a forgery never verifies, every contract spelling of a right
 * signature does. Over HTTP, random bodies, content types and headers never get a 5xx but 503, nor a 2xx
 * unless signed. fast-check draws a new seed each run and prints it with a failure: FUZZ_SEED replays it.
 */
replayFromEnvironment();
const HEADER_RUNS = 100_000;
const FORM_RUNS = 10_000;
const WARM_UP_RUNS = 200;
const INJECT_RUNS = 2_300;
const LOOPBACK_RUNS = 500;
const CRC_RUNS = 1_000;

const counted = { inProcess: 0, http: 0 };
const lenient = { accepted: 0, refused: 0 };

/** Node's collector; exposed at run time when the process did not start with --expose-gc. */
function collector(): () => void {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const gc = collector();
const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const heap = { start: heapAfterGc(), inProcessMiB: 0, httpMiB: 0 };
const grownMiB = (since: number): number => (heapAfterGc() - since) / 1_048_576;

const hookOf = (secrets: readonly string[]): HookConfig => ({
  name: 'default',
  secrets,
  crc: true,
  trustedOrigins: [],
  services: [],
  changeTypes: ['*'],
});
const policyOf = (requireSignature: boolean): SignaturePolicy => ({ requireSignature, signatureHeaders: SIGNATURE_HEADERS });

/** Why `result` is wrong for a delivery `expected` on a hook with `keys`, or undefined when it is right. */
function judge(keys: readonly string[], requireSignature: boolean, expected: Expected, result: AuthenticationResult): string | undefined {
  const refused = (code: string): string | undefined => (!result.ok && result.code === code ? undefined : `expected ${code}`);
  const unverified = (): string | undefined => (result.ok && !result.verified ? undefined : 'expected an unverified accept');
  if (keys.length === 0) return requireSignature ? refused('GEOHOOK_ERR_UNSIGNED_NOT_ALLOWED') : unverified();
  switch (expected) {
    case 'missing':
      return requireSignature ? refused('GEOHOOK_ERR_MISSING_SIGNATURE') : unverified();
    case 'accept':
      return result.ok && result.verified ? undefined : 'a right signature in a contract spelling was refused';
    case 'reject':
      return result.ok ? 'a forged signature was accepted' : refused('GEOHOOK_ERR_BAD_SIGNATURE');
    case 'either':
      lenient[result.ok ? 'accepted' : 'refused'] += 1;
      if (result.ok) return result.verified ? undefined : 'a signed delivery was accepted unverified';
      return refused('GEOHOOK_ERR_BAD_SIGNATURE');
  }
}

const keysArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant<string[]>([]) },
  { weight: 19, arbitrary: fc.array(keyArb, { minLength: 1, maxLength: 3 }) },
);
const requireArb = fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
/** Real-looking payloads, drawn once: the signature is the point here, not the body. */
const samplePayloadArb = fc.constantFrom(...fc.sample(payloadArb, 50).map((text) => Buffer.from(text)));

t.test(
  `${HEADER_RUNS.toLocaleString('en')} signature headers: no forgery verifies, every contract spelling of a right signature does`,
  async (t) => {
    const caseArb = fc.record({
      keys: keysArb,
      requireSignature: requireArb,
      body: fc.oneof(
        fc.uint8Array({ maxLength: 256 }),
        fc.string({ unit: 'binary', maxLength: 64 }).map((text) => Buffer.from(text)),
        samplePayloadArb,
      ),
      source: sourceArb('any', 262_144),
      placement: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom<Placement>('service', 'esri') },
        fc.constantFrom<Placement>('esriAfterEmptyService', 'serviceWithDecoy', 'array', 'none'),
      ),
      decoy: decoyArb,
    });
    fc.assert(
      fc.property(caseArb, (c) => {
        counted.inProcess += 1;
        const body = Buffer.from(c.body);
        const { headers, expected } = place(c.placement, signatureOf(c.source, c.keys, body), decoyOf(c.decoy, c.keys, body));
        const result = authenticate(hookOf(c.keys), policyOf(c.requireSignature), headers, body);
        const failure = judge(c.keys, c.requireSignature, expected, result);
        if (failure !== undefined) throw new Error(`${failure}: ${JSON.stringify(result)} for ${JSON.stringify(headers).slice(0, 400)}`);
      }),
      { numRuns: HEADER_RUNS },
    );
    t.pass(
      `no forgery verified, every contract spelling did; of the right digests in other spellings ${lenient.accepted} were accepted, ${lenient.refused} refused`,
    );
  },
);

t.test(
  `${FORM_RUNS.toLocaleString('en')} ArcGIS Online forms signed in a field: accepted only when the signature covers all they carry`,
  async (t) => {
    const caseArb = fc.record({ keys: keysArb, requireSignature: requireArb, form: formRecipeArb('any') });
    fc.assert(
      fc.property(caseArb, (c) => {
        counted.inProcess += 1;
        const delivery = makeFormDelivery(c.form, c.keys);
        const form = parseLimitedForm(delivery.body.toString('utf8')) as FormFields;
        const result = authenticate(hookOf(c.keys), policyOf(c.requireSignature), {}, delivery.body, form);
        const failure = judge(c.keys, c.requireSignature, delivery.signature === '' ? 'missing' : delivery.verdict, result);
        if (failure !== undefined)
          throw new Error(`${failure}: ${JSON.stringify(result)} for ${delivery.body.toString('latin1').slice(0, 400)}`);
        // Whatever the model says: a delivery accepted on a field signature holds the signed payload and nothing else.
        if (result.ok && result.verified) {
          const unsigned = Object.entries(form).filter(([name]) => !(SIGNATURE_HEADERS as readonly string[]).includes(name.toLowerCase()));
          if (unsigned.length !== 1 || unsigned[0]![1] !== delivery.payload)
            throw new Error(`fields the signature does not cover were accepted: ${JSON.stringify(unsigned).slice(0, 400)}`);
        }
      }),
      { numRuns: FORM_RUNS },
    );
    t.pass('no form carrying unsigned fields or a second payload was accepted');
    heap.inProcessMiB = grownMiB(heap.start);
  },
);

t.test(
  `${(WARM_UP_RUNS + INJECT_RUNS + LOOPBACK_RUNS).toLocaleString('en')} random deliveries to a real receiver: no 5xx but 503, no 2xx unless signed, heap bounded`,
  async (t) => {
    const redis = await startRedis(t);
    const receiver = await startReceiver(t, redis, { MAX_BODY_BYTES: String(MAX_BODY_BYTES), HOOK_SECRETS: HTTP_KEYS.join(',') });
    const statuses = new Map<number, number>();
    const tally = (status: number): void => {
      counted.http += 1;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    };

    const injected = fc.asyncProperty(httpCaseArb(MAX_BODY_BYTES + 4_000), async (c) => {
      const prepared = prepare(c);
      const response = await receiver.app.inject({ method: 'POST', url: prepared.url, headers: prepared.headers, payload: prepared.bytes });
      tally(response.statusCode);
      check(prepared, response.statusCode, response.body);
    });
    // The first deliveries load and compile what the rest reuse; the heap is measured from after them.
    await fc.assert(injected, { numRuns: WARM_UP_RUNS });
    const heapBefore = heapAfterGc();
    await fc.assert(injected, { numRuns: INJECT_RUNS });

    // Real HTTP on loopback: Node's own parser reads the request line, headers and body.
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    t.teardown(() => agent.destroy());
    await fc.assert(
      fc.asyncProperty(httpCaseArb(MAX_BODY_BYTES - 4_000), async (c) => {
        const prepared = prepare(c);
        const { status, text } = await post(receiver.url, agent, prepared);
        tally(status);
        check(prepared, status, text);
      }),
      { numRuns: LOOPBACK_RUNS },
    );

    heap.httpMiB = grownMiB(heapBefore);
    const fine = Buffer.from(
      JSON.stringify({ serviceType: 'GPServer', jobId: 'after-the-fuzz', events: [{ eventType: 'esriJobSucceeded' }] }),
    );
    t.equal(
      (await receiver.post(fine, { 'x-service': contractSpelling(hmac(TEST_KEY, fine), 1) })).status,
      202,
      'a right delivery afterwards is accepted',
    );
    t.equal((await fetch(`${receiver.url}/healthz`)).status, 200, 'the receiver still serves');
    t.comment(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
  },
);

t.test(
  `${CRC_RUNS.toLocaleString('en')} challenges: no crc_token answer verifies as a delivery, as JSON, as a form or in the Online form field`,
  async (t) => {
    const redis = await startRedis(t);
    const receiver = await startReceiver(t, redis);
    const tokens = { answered: 0, refused: 0 };
    const bodyArb = fc.oneof(
      payloadArb,
      fc.stringMatching(/^[A-Za-z0-9._~+/=-]{1,80}$/),
      fc.string({ unit: 'grapheme', maxLength: 120 }),
      fc.string({ unit: 'grapheme-ascii', maxLength: 120 }),
    );
    await fc.assert(
      fc.asyncProperty(bodyArb, async (body) => {
        const challenge = await receiver.app.inject({ method: 'GET', url: `/webhooks/default?crc_token=${encodeURIComponent(body)}` });
        if (challenge.statusCode !== 200) {
          tokens.refused += 1;
          if (challengeShaped(Buffer.from(body)) && body.length <= 256) throw new Error(`a token of the alphabet was refused: ${body}`);
          return;
        }
        tokens.answered += 1;
        const signature = (challenge.json() as { response_token: string }).response_token;
        const deliveries = [
          { 'content-type': 'application/json', 'x-service': signature, payload: body },
          { 'content-type': 'application/x-www-form-urlencoded', 'x-esrihook-signature': signature, payload: body },
          {
            'content-type': 'application/x-www-form-urlencoded',
            payload: `payload=${encodeURIComponent(body)}&x-esriHook-Signature=${encodeURIComponent(signature)}`,
          },
          {
            'content-type': 'application/x-www-form-urlencoded',
            payload: `payload=${body}&x-esriHook-Signature=${encodeURIComponent(signature)}`,
          },
        ];
        for (const { payload, ...headers } of deliveries) {
          const response = await receiver.app.inject({ method: 'POST', url: '/webhooks/default', headers, payload });
          if (response.statusCode === 202)
            throw new Error(`the answer to crc_token ${JSON.stringify(body)} signed a delivery: ${JSON.stringify(headers)}`);
        }
      }),
      { numRuns: CRC_RUNS },
    );
    t.ok(tokens.answered >= CRC_RUNS / 4, `${tokens.answered} challenges answered (${tokens.refused} refused): none signed a delivery`);
  },
);

t.test('the case count and the heap', async (t) => {
  const total = counted.inProcess + counted.http;
  t.ok(counted.inProcess >= 95_000, `${counted.inProcess.toLocaleString('en')} cases in process`);
  t.ok(counted.http >= 2_500, `${counted.http.toLocaleString('en')} cases over HTTP`);
  t.ok(total >= 100_000, `${total.toLocaleString('en')} cases in all`);
  t.ok(
    heap.inProcessMiB < 8,
    `heap after a full collection grew ${heap.inProcessMiB.toFixed(1)} MiB over the ${counted.inProcess.toLocaleString('en')} cases in process`,
  );
  t.ok(
    heap.httpMiB < 8,
    `and ${heap.httpMiB.toFixed(1)} MiB over ${(INJECT_RUNS + LOOPBACK_RUNS).toLocaleString('en')} deliveries (after ${WARM_UP_RUNS} to warm up)`,
  );
});
