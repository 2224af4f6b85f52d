import { AdminApiError } from '../errors.js';
import type { AdminAnswer } from './check-response.js';
import { pathOf, urlWithoutToken } from './redact.js';
import { utf8Text } from './utf8-text.js';

/** How one request is sent. */
export interface TransportOptions {
  /** The fetch to use. */
  fetch: typeof fetch;
  /** The whole exchange, body included, must end within this. */
  timeoutMs: number;
}

/** Settles like `promise`, or rejects with the signal's reason once it aborts (even if `promise` never settles). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/**
 * One exchange read to the end within `timeoutMs` (`AbortSignal.timeout`). A redirect is never followed: its
 * answer comes back with the `location` it names (a form re-sent to another origin would carry the token or
 * the password there), and `checkResponse` turns it into an error.
 */
function exchange(url: string, init: RequestInit, options: TransportOptions): Promise<AdminAnswer> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const answer = (async (): Promise<AdminAnswer> => {
    const response = await options.fetch(url, { ...init, redirect: 'manual', signal });
    const location = response.headers.get('location');
    return {
      status: response.status,
      statusText: response.statusText,
      body: utf8Text(new Uint8Array(await response.arrayBuffer())),
      url,
      ...(location === null ? {} : { location: new URL(location, url).href }),
    };
  })();
  return untilAborted(answer, signal);
}

/** The body of an answer, as it arrives. */
export type BodyConsumer<T> = (body: AsyncIterable<Uint8Array>) => Promise<T>;

/**
 * {@link postForm} (with a `form`) or {@link getJson} (without) for a large answer: a 2xx body goes to `consume` as
 * it arrives, within the same timeout; any other answer (an error, a redirect) is read whole and returned.
 */
export function exchangeBody<T>(
  url: string,
  form: URLSearchParams | undefined,
  options: TransportOptions,
  consume: BodyConsumer<T>,
): Promise<{ value: T } | { answer: AdminAnswer }> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const init: RequestInit =
    form === undefined
      ? { headers: { accept: 'application/json' } }
      : {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: form.toString(),
        };
  const answer = (async (): Promise<{ value: T } | { answer: AdminAnswer }> => {
    const response = await options.fetch(url, { ...init, redirect: 'manual', signal });
    const location = response.headers.get('location');
    if (response.status >= 200 && response.status <= 299 && location === null) {
      return { value: await consume(response.body ?? (async function* () {})()) };
    }
    return {
      answer: {
        status: response.status,
        statusText: response.statusText,
        body: utf8Text(new Uint8Array(await response.arrayBuffer())),
        url,
        ...(location === null ? {} : { location: new URL(location, url).href }),
      },
    };
  })();
  return untilAborted(answer, signal);
}

/** POSTs `form` as `application/x-www-form-urlencoded`; network failures and the timeout are thrown as they come (see {@link networkError}). */
export function postForm(url: string, form: URLSearchParams, options: TransportOptions): Promise<AdminAnswer> {
  const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  return exchange(url, { method: 'POST', headers, body: form.toString() }, options);
}

/** GETs `url`, with no credentials; as {@link postForm}. */
export function getJson(url: string, options: TransportOptions): Promise<AdminAnswer> {
  return exchange(url, { headers: { accept: 'application/json' } }, options);
}

/** Why a request got no answer: a timeout, or the fetch error with its cause's code (`fetch failed (ECONNREFUSED)`). */
export function reasonOf(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && err.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  return detail === undefined ? err.message : `${err.message} (${detail})`;
}

/** The `AdminApiError` for a call that got no answer after `attempts` tries; `err` is kept as the cause. */
export function networkError(url: string, err: unknown, attempts: number, timeoutMs: number): AdminApiError {
  const reason = `request failed: ${reasonOf(err, timeoutMs)}${attempts > 1 ? ` after ${attempts} attempts` : ''}`;
  const clean = urlWithoutToken(url);
  return new AdminApiError(`${pathOf(clean)}: ${reason}`, {
    serverCode: undefined,
    messages: [reason],
    url: clean,
    response: undefined,
    cause: err,
  });
}
