import type { IncomingHttpHeaders } from 'node:http';
import type { HookConfig } from '../config/load-config.js';
import type { ErrorCode } from '../errors.js';
import { couldBeCrcToken } from '../signature/crc.js';
import { verify } from '../signature/verify.js';
import { formField, rawFormValue, type FormFields } from './form-fields.js';

/** How the receiver treats signatures. */
export interface SignaturePolicy {
  /** Refuse unsigned deliveries (`REQUIRE_SIGNATURE`). */
  requireSignature: boolean;
  /** Lower-cased header names that may carry the signature, first present wins. */
  signatureHeaders: readonly string[];
}

export type AuthenticationResult = { ok: true; verified: boolean } | { ok: false; code: ErrorCode; message: string };

interface SignedData {
  signature: string;
  /** The bytes the signature may cover. */
  data: Buffer | Buffer[];
  /** False for a form signed in a field that holds more than its signature covers. */
  covers: boolean;
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * True when a form holds one `payload` field (one value) and nothing else but signature fields: all that a
 * signature in a field covers. A second `payload` or any other field would reach consumers unsigned.
 */
function onlyPayloadAndSignature(form: FormFields, signatureFields: readonly string[]): boolean {
  let payloads = 0;
  for (const [name, value] of Object.entries(form)) {
    const lower = name.toLowerCase();
    if (signatureFields.includes(lower)) continue;
    if (lower !== 'payload' || Array.isArray(value)) return false;
    payloads += 1;
  }
  return payloads === 1;
}

const OWS_ONLY = /^[ \t]*$/;

/**
 * Where the signature is: a header over the whole body, or (ArcGIS Online form deliveries) a form field
 * over the `payload` field's value, as its raw encoded bytes or as its decoded text.
 */
function findSignature(policy: SignaturePolicy, headers: IncomingHttpHeaders, rawBody: Buffer, form?: FormFields): SignedData | undefined {
  for (const name of policy.signatureHeaders) {
    const signature = headerValue(headers, name);
    // Only spaces and tabs is an empty value, as HTTP reads it (RFC 9110 §5.5): the next place is looked at.
    if (signature !== undefined && !OWS_ONLY.test(signature)) return { signature, data: rawBody, covers: true };
  }
  if (form === undefined) return undefined;
  for (const name of policy.signatureHeaders) {
    const signature = formField(form, name);
    const payload = formField(form, 'payload');
    if (signature === undefined || signature === '' || payload === undefined) continue;
    const rawPayload = rawFormValue(rawBody, 'payload');
    const decodedPayload = Buffer.from(payload, 'utf8');
    const data = rawPayload === undefined ? decodedPayload : [rawPayload, decodedPayload];
    return { signature, data, covers: onlyPayloadAndSignature(form, policy.signatureHeaders) };
  }
  return undefined;
}

/** Decides whether a delivery may be accepted and whether its signature was verified. */
export function authenticate(
  hook: HookConfig,
  policy: SignaturePolicy,
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
  form?: FormFields,
): AuthenticationResult {
  const signed = findSignature(policy, headers, rawBody, form);
  if (hook.secrets.length === 0) {
    return policy.requireSignature
      ? {
          ok: false,
          code: 'GEOHOOK_ERR_UNSIGNED_NOT_ALLOWED',
          message: `hook "${hook.name}" has no signature key and REQUIRE_SIGNATURE is true`,
        }
      : { ok: true, verified: false };
  }
  if (signed === undefined) {
    return policy.requireSignature
      ? { ok: false, code: 'GEOHOOK_ERR_MISSING_SIGNATURE', message: `no signature in ${policy.signatureHeaders.join(' or ')}` }
      : { ok: true, verified: false };
  }
  if (!signed.covers) {
    return {
      ok: false,
      code: 'GEOHOOK_ERR_BAD_SIGNATURE',
      message: 'a form signed in a field may hold only one payload field and the signature',
    };
  }
  // Bytes a challenge could have been answered for are never a delivery: the challenge is no signing oracle.
  const candidates = (Buffer.isBuffer(signed.data) ? [signed.data] : signed.data).filter((bytes) => !couldBeCrcToken(bytes));
  return candidates.length > 0 && verify(hook.secrets, candidates, signed.signature)
    ? { ok: true, verified: true }
    : { ok: false, code: 'GEOHOOK_ERR_BAD_SIGNATURE', message: 'the signature does not match any key of the hook' };
}
