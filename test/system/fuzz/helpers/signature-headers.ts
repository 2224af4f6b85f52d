import fc from 'fast-check';
import { forgedValueArb, recipeArb, type Charset } from './signature-arbitraries.js';
import {
  challengeShaped,
  contractSpelling,
  hmac,
  makeSignature,
  type SignatureRecipe,
  type SignatureValue,
  type Verdict,
} from './signatures.js';

/** Where a delivery's signature travels: the headers the receiver reads, first present (and non-empty) wins. */
export const SIGNATURE_HEADERS = ['x-service', 'x-esrihook-signature'] as const;

/** What the receiver must decide: a verdict on the signature that counts, or `missing` when none does. */
export type Expected = Verdict | 'missing';

export type Source = { kind: 'recipe'; recipe: SignatureRecipe } | { kind: 'forged'; value: string };
export const sourceArb = (charset: Charset, maxHugeLength: number): fc.Arbitrary<Source> =>
  fc.oneof(
    { weight: 4, arbitrary: recipeArb(charset).map((recipe) => ({ kind: 'recipe' as const, recipe })) },
    forgedValueArb(charset, maxHugeLength).map((value) => ({ kind: 'forged' as const, value })),
  );
export const signatureOf = (source: Source, keys: readonly string[], body: Buffer): SignatureValue =>
  source.kind === 'recipe' ? makeSignature(source.recipe, keys, [body]) : { value: source.value, verdict: 'reject' };

export type Placement = 'service' | 'esri' | 'esriAfterEmptyService' | 'serviceWithDecoy' | 'array' | 'none';
export const HTTP_PLACEMENTS: readonly Placement[] = ['service', 'esri', 'esriAfterEmptyService', 'serviceWithDecoy', 'none'];

/** A right contract spelling, or a forgery, in the header the real signature does not use. */
export const decoyArb = fc.oneof(
  fc.nat({ max: 15 }).map((spelling) => ({ right: true as const, spelling })),
  forgedValueArb('ascii', 200).map((value) => ({ right: false as const, value })),
);
type Decoy = typeof decoyArb extends fc.Arbitrary<infer T> ? T : never;
export function decoyOf(decoy: Decoy, keys: readonly string[], body: Buffer): SignatureValue {
  if (!decoy.right || keys.length === 0 || challengeShaped(body))
    return { value: decoy.right ? 'sha256=' : decoy.value, verdict: 'reject' };
  return { value: contractSpelling(hmac(keys[0]!, body), decoy.spelling), verdict: 'accept' };
}

/** The signature headers of a placement, and the verdict of the first non-empty one (docs/receiver.md#signatures: the first present wins). */
export function place(
  placement: Placement,
  signature: SignatureValue,
  decoy: SignatureValue,
): { headers: Record<string, string | string[]>; expected: Expected } {
  const empty: SignatureValue = { value: '', verdict: 'reject' };
  const slots: Partial<Record<(typeof SIGNATURE_HEADERS)[number], SignatureValue[]>> = {
    service: { 'x-service': [signature] },
    esri: { 'x-esrihook-signature': [signature] },
    esriAfterEmptyService: { 'x-service': [empty], 'x-esrihook-signature': [signature] },
    serviceWithDecoy: { 'x-service': [signature], 'x-esrihook-signature': [decoy] },
    array: { 'x-service': [signature, decoy] },
    none: {},
  }[placement];
  const headers: Record<string, string | string[]> = {};
  let expected: Expected | undefined;
  for (const name of SIGNATURE_HEADERS) {
    const values = slots[name];
    if (values === undefined) continue;
    headers[name] = values.length === 1 ? values[0]!.value : values.map((value) => value.value);
    // Spaces and tabs only are an empty value on the wire (HTTP drops them around a value).
    if (expected === undefined && !/^[ \t]*$/.test(values[0]!.value)) expected = values[0]!.verdict;
  }
  return { headers, expected: expected ?? 'missing' };
}
