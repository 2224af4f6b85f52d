import fc from 'fast-check';
import { forgedValueArb, recipeArb, type Charset } from './signature-arbitraries.js';
import { makeSignature, type SignatureRecipe, type Verdict } from './signatures.js';

/**
 * ArcGIS Online-style form deliveries, `payload=<json>&x-esriHook-Signature=<signature>`, whose signature
 * covers the `payload` value only (its raw encoded bytes or its decoded text), and everything a sender or an
 * attacker can add around it. The verdict says what the receiver must do, judged from how the body was made.
 */
export type FormExtra =
  | 'none'
  | 'emptyPairs'
  | 'field'
  | 'secondPayloadAfter'
  | 'secondPayloadBefore'
  | 'otherCasePayloadAfter'
  | 'bareName'
  | 'emptyName'
  | 'casePayload'
  | 'encodedName';

export interface FormRecipe {
  payload: string;
  payloadEncoding: 'component' | 'form';
  signedOver: 'raw' | 'decoded';
  signature: { kind: 'recipe'; recipe: SignatureRecipe } | { kind: 'forged'; value: string };
  fieldName: string;
  fieldEncoding: 'component' | 'raw';
  signatureFirst: boolean;
  extra: FormExtra;
  /** What an attacker appends: a payload of their own. */
  evil: string;
}

export interface FormDelivery {
  body: Buffer;
  /** The signature field's value ('' means the field is there but empty, so the delivery is unsigned). */
  signature: string;
  verdict: Verdict;
  /** The decoded `payload` value that was signed. */
  payload: string;
}

/** Extras that add nothing unsigned; the others add a field or a second payload, so the signature no longer covers the delivery. */
const CLEAN: ReadonlySet<FormExtra> = new Set(['none', 'emptyPairs']);
/** Unusual spellings of the one payload field: accepting them forges nothing. */
const ODD: ReadonlySet<FormExtra> = new Set(['casePayload', 'encodedName']);
const RAW_SAFE = /^[A-Za-z0-9+/=_.%-]*$/;

const encodeForm = (text: string): string => new URLSearchParams({ p: text }).toString().slice(2);

export function makeFormDelivery(recipe: FormRecipe, keys: readonly string[]): FormDelivery {
  const raw = recipe.payloadEncoding === 'component' ? encodeURIComponent(recipe.payload) : encodeForm(recipe.payload);
  const [rawBytes, decodedBytes] = [Buffer.from(raw), Buffer.from(recipe.payload)];
  const signed = recipe.signedOver === 'raw' ? [rawBytes, decodedBytes] : [decodedBytes, rawBytes];
  const signature =
    recipe.signature.kind === 'recipe'
      ? makeSignature(recipe.signature.recipe, keys, signed)
      : { value: recipe.signature.value, verdict: 'reject' as const };
  const rawField = recipe.fieldEncoding === 'raw' && RAW_SAFE.test(signature.value);
  let verdict = signature.verdict;
  // A raw `+` arrives as a space (form decoding): the receiver puts it back, the contract does not say so.
  if (rawField && verdict === 'accept' && signature.value.includes('+')) verdict = 'either';
  if (verdict !== 'reject' && !CLEAN.has(recipe.extra)) verdict = ODD.has(recipe.extra) ? 'either' : 'reject';

  const name = recipe.extra === 'casePayload' ? 'PAYLOAD' : recipe.extra === 'encodedName' ? 'p%61yload' : 'payload';
  const payloadPair = `${name}=${raw}`;
  const signaturePair = `${recipe.fieldName}=${rawField ? signature.value : encodeURIComponent(signature.value)}`;
  const pairs = recipe.signatureFirst ? [signaturePair, payloadPair] : [payloadPair, signaturePair];
  const evil = encodeURIComponent(recipe.evil);
  const extras: Record<FormExtra, string[]> = {
    none: pairs,
    emptyPairs: ['', ...pairs.flatMap((pair) => [pair, '']), ''],
    field: [...pairs, `extra=${evil}`],
    secondPayloadAfter: [...pairs, `payload=${evil}`],
    secondPayloadBefore: [`payload=${evil}`, ...pairs],
    otherCasePayloadAfter: [...pairs, `Payload=${evil}`],
    bareName: [...pairs, 'junk'],
    emptyName: [...pairs, `=${evil}`],
    casePayload: pairs,
    encodedName: pairs,
  };
  const text = extras[recipe.extra].join('&');
  return { body: Buffer.from(text), signature: signature.value, verdict, payload: recipe.payload };
}

/** GP and feature payloads as the GIS server sends them, and random JSON. */
export const payloadArb: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({
      serviceType: fc.constant('GPServer'),
      jobId: fc.stringMatching(/^j[0-9a-f]{8,32}$/),
      statusURL: fc.webUrl(),
      folderName: fc.constantFrom('Tools', 'Hosted', ''),
      serviceName: fc.string({ minLength: 1, maxLength: 20 }),
      events: fc.array(
        fc.record({ eventType: fc.constantFrom('esriJobSucceeded', 'esriJobFailed', 'esriJobCancelled', 'JobSucceeded'), when: fc.nat() }),
        { minLength: 1, maxLength: 2 },
      ),
    })
    .map((payload) => JSON.stringify(payload)),
  fc
    .array(
      fc.record({
        name: fc.string({ maxLength: 20 }),
        layerId: fc.nat({ max: 10 }),
        orgId: fc.string({ maxLength: 16 }),
        serviceName: fc.string({ maxLength: 20 }),
        lastUpdatedTime: fc.nat(),
        changesUrl: fc.webUrl({ withQueryParameters: true }),
        events: fc.array(fc.constantFrom('FeaturesCreated', 'FeaturesUpdated', 'FeaturesDeleted', 'AttachmentsCreated'), {
          minLength: 1,
          maxLength: 3,
        }),
      }),
      { minLength: 1, maxLength: 2 },
    )
    .map((payload) => JSON.stringify(payload, null, payload.length > 1 ? 2 : 0)),
  fc.json({ maxDepth: 3 }),
);

export const formRecipeArb = (charset: Charset): fc.Arbitrary<FormRecipe> =>
  fc.record({
    payload: payloadArb,
    payloadEncoding: fc.constantFrom('component' as const, 'form' as const),
    signedOver: fc.constantFrom('raw' as const, 'decoded' as const),
    signature: fc.oneof(
      { weight: 5, arbitrary: recipeArb(charset).map((recipe) => ({ kind: 'recipe' as const, recipe })) },
      forgedValueArb(charset, 4_000).map((value) => ({ kind: 'forged' as const, value })),
    ),
    fieldName: fc.constantFrom('x-esriHook-Signature', 'x-esrihook-signature', 'X-ESRIHOOK-SIGNATURE', 'x-service'),
    fieldEncoding: fc.constantFrom('component' as const, 'raw' as const),
    signatureFirst: fc.boolean(),
    extra: fc.oneof(
      { weight: 6, arbitrary: fc.constant<FormExtra>('none') },
      fc.constantFrom<FormExtra>(
        'emptyPairs',
        'field',
        'secondPayloadAfter',
        'secondPayloadBefore',
        'otherCasePayloadAfter',
        'bareName',
        'emptyName',
        'casePayload',
        'encodedName',
      ),
    ),
    evil: fc.constantFrom(
      JSON.stringify({ serviceType: 'GPServer', jobId: 'jevil', events: [{ eventType: 'esriJobFailed' }] }),
      JSON.stringify([{ layerId: 0, changesUrl: 'https://evil.example/changes', events: ['FeaturesDeleted'] }]),
      'plain text',
    ),
  });
