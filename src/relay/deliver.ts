import { RelayDeliveryError } from '../errors.js';
import type { RelayRequest } from './formats/relay-request.js';

/**
 * What {@link deliver} needs of `fetch`: a POST that does not follow redirects, the status, a header, and the body
 * (or none, when the client read it itself). `globalThis.fetch` is one; relay workers use `createRelayTransport`'s.
 */
export type RelayFetch = (
  url: string,
  init: { method: 'POST'; headers: Record<string, string>; body: string; redirect: 'manual'; signal: AbortSignal },
) => Promise<{ status: number; headers: { get(name: string): string | null }; body: ReadableStream<Uint8Array> | null }>;

/** Options of {@link deliver}. */
export interface DeliverOptions {
  /** The `fetch` to call (tests inject one). @defaultValue globalThis.fetch */
  fetch?: RelayFetch;
  /** Longest wait for the answer, its body included (Standard Webhooks recommends 15 to 30 s). @defaultValue 15000 */
  timeoutMs?: number;
  /** Bytes of the answer's body read (then discarded) before the connection is let go. @defaultValue 4096 */
  maxResponseBytes?: number;
  /** Longest `Retry-After` honoured; a longer one is cut to this. @defaultValue 3600000 (an hour) */
  maxRetryAfterMs?: number;
  /** The clock an HTTP-date `Retry-After` is read against, ms since the epoch. @defaultValue Date.now */
  now?: () => number;
}

/** @defaultValue of {@link DeliverOptions.timeoutMs}. */
export const DEFAULT_RELAY_TIMEOUT_MS = 15_000;
/** @defaultValue of {@link DeliverOptions.maxResponseBytes}. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4096;
/** @defaultValue of {@link DeliverOptions.maxRetryAfterMs}. */
export const DEFAULT_MAX_RETRY_AFTER_MS = 3_600_000;

/** Why a try failed: a non-2xx answer (`status`), a 3xx (`redirect`, never followed), no answer in time, no connection. */
export type DeliveryFailureReason = 'status' | 'redirect' | 'timeout' | 'network';

/** A try the route took: it answered 2xx. */
export interface DeliverySuccess {
  delivered: true;
  status: number;
  durationMs: number;
}

/**
 * A try the route did not take. Every failure but a 410 is retried (Standard Webhooks: any non-2xx is a failure
 * to retry): `gone` for a 410, after which the event is not sent again (the spec says the sender should stop
 * sending); `clientError` for a 4xx other than 408 and 429 (a wrong URL, a refused signature), which retrying
 * rarely mends.
 */
export interface DeliveryFailure {
  delivered: false;
  reason: DeliveryFailureReason;
  /** The HTTP status, when the route answered. */
  status?: number;
  /** The wait a 429 or 503 asked for with `Retry-After`, cut to `maxRetryAfterMs`. */
  retryAfterMs?: number;
  clientError: boolean;
  gone: boolean;
  /** One line for logs and `lastError`: the status or the error, never a header or the body. */
  message: string;
  durationMs: number;
}

export type DeliveryOutcome = DeliverySuccess | DeliveryFailure;

/**
 * The wait a `Retry-After` value asks for, ms: delta-seconds or an HTTP-date (against `nowMs`), at least 0 and at
 * most `maxMs`; undefined when the header is absent or neither form.
 */
export function parseRetryAfter(value: string | null, nowMs: number, maxMs: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  let waitMs: number;
  if (/^\d+$/.test(text)) waitMs = Number(text) * 1000;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
    waitMs = at - nowMs;
  }
  return Math.min(Math.max(0, waitMs), maxMs);
}

/** Reads at most `maxBytes` of a body and lets the rest go; a body that fails or stalls is abandoned, not an error. */
async function drain(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<void> {
  if (body === null) return;
  const reader = body.getReader();
  try {
    for (let read = 0; read < maxBytes;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      read += chunk.value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The status has decided the outcome; the body only frees the connection.
  } finally {
    reader.releaseLock();
  }
}

function failure(
  reason: DeliveryFailureReason,
  message: string,
  startedAt: number,
  status?: number,
  retryAfterMs?: number,
): DeliveryFailure {
  const outcome: DeliveryFailure = {
    delivered: false,
    reason,
    clientError: status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429,
    gone: status === 410,
    message,
    durationMs: performance.now() - startedAt,
  };
  if (status !== undefined) outcome.status = status;
  if (retryAfterMs !== undefined) outcome.retryAfterMs = retryAfterMs;
  return outcome;
}

/**
 * One try of one relay request: a POST to `url` that never follows a redirect (only configured URLs are
 * called), given up after `timeoutMs`, the answer's body read up to `maxResponseBytes` and discarded. Never
 * throws: the outcome says whether the route took it and, if not, why.
 */
export async function deliver(url: string, request: RelayRequest, options: DeliverOptions = {}): Promise<DeliveryOutcome> {
  const {
    fetch: fetchFn = globalThis.fetch,
    timeoutMs = DEFAULT_RELAY_TIMEOUT_MS,
    maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES,
    maxRetryAfterMs = DEFAULT_MAX_RETRY_AFTER_MS,
    now = Date.now,
  } = options;
  const startedAt = performance.now();
  let response: Awaited<ReturnType<RelayFetch>>;
  try {
    response = await fetchFn(url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const name = (err as { name?: unknown } | null)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') return failure('timeout', `no answer within ${timeoutMs} ms`, startedAt);
    const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
    const detail = typeof cause?.code === 'string' ? cause.code : err instanceof Error ? err.message : String(err);
    return failure('network', `could not reach the route: ${detail}`, startedAt);
  }
  await drain(response.body, maxResponseBytes);
  const { status } = response;
  if (status >= 200 && status < 300) return { delivered: true, status, durationMs: performance.now() - startedAt };
  if (status >= 300 && status < 400)
    return failure('redirect', `answered ${status} (a redirect, not followed: configure the final URL)`, startedAt, status);
  const retryAfterMs =
    status === 429 || status === 503 ? parseRetryAfter(response.headers.get('retry-after'), now(), maxRetryAfterMs) : undefined;
  return failure('status', `answered ${status}`, startedAt, status, retryAfterMs);
}

/** The error a relay worker throws for a failed try: its message, status and `Retry-After` wait. */
export function deliveryError(outcome: DeliveryFailure): RelayDeliveryError {
  const details: { status?: number; retryAfterMs?: number } = {};
  if (outcome.status !== undefined) details.status = outcome.status;
  if (outcome.retryAfterMs !== undefined) details.retryAfterMs = outcome.retryAfterMs;
  return new RelayDeliveryError(outcome.message, details);
}
