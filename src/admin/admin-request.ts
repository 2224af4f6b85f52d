import { checkListResponse, checkResponse, type AdminAnswer } from '../arcgis-request/check-response.js';
import { encodeParams, type AdminParams } from '../arcgis-request/encode-params.js';
import type { TokenProvider } from '../arcgis-request/token-provider.js';
import { networkError, postForm } from '../arcgis-request/transport.js';
import { AdminApiError, AdminAuthError } from '../errors.js';

/** Options of {@link createAdminRequest}. */
export interface AdminRequestOptions {
  /** `{base_url}`; a trailing slash is dropped. */
  baseUrl: string;
  tokens: TokenProvider;
  fetch: typeof fetch;
  /** Per request, body included. */
  timeoutMs: number;
  /** Waits between tries of an idempotent read; its length is the number of retries. */
  retryDelaysMs: readonly number[];
  /** @defaultValue a `setTimeout` promise */
  sleep?: (ms: number) => Promise<void>;
}

/** How one operation is sent. */
export interface SendOptions {
  /** True for reads: network errors and 5xx are retried on the schedule. Writes are never retried. */
  idempotent: boolean;
}

/** Sends admin operations: `send(path, params)` POSTs to `{base_url}/<path>` (`''`: the root) and returns the checked JSON. */
export interface AdminRequest {
  send(path: string, params: AdminParams, options: SendOptions): Promise<Record<string, unknown>>;
  /** {@link AdminRequest.send} for an operation that answers a bare JSON array. */
  sendForList(path: string, params: AdminParams, options: SendOptions): Promise<unknown[]>;
  /** The full URL of `path`. */
  urlOf(path: string): string;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A 5xx, as HTTP status or as the code of an error body. */
const isServerError = (err: unknown, answer: AdminAnswer): boolean =>
  err instanceof AdminApiError && (answer.status >= 500 || (err.serverCode ?? 0) >= 500);

/**
 * The request layer: every operation is a form POST with `token` in the body (never the URL) and `f=json`,
 * bounded by `timeoutMs`. Reads are retried on network errors and 5xx; an `AdminAuthError` makes a renewable
 * token provider renew once and the operation is sent once more.
 */
export function createAdminRequest(options: AdminRequestOptions): AdminRequest {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const sleep = options.sleep ?? delay;
  const transport = { fetch: options.fetch, timeoutMs: options.timeoutMs };
  const urlOf = (path: string): string => (path === '' ? baseUrl : `${baseUrl}/${path.replace(/^\/+/, '')}`);

  async function withRetries<T>(
    url: string,
    params: AdminParams,
    token: string | undefined,
    idempotent: boolean,
    check: (answer: AdminAnswer) => T,
  ): Promise<T> {
    const form = encodeParams(params);
    if (token !== undefined) form.set('token', token);
    const delays = idempotent ? options.retryDelaysMs : [];
    for (let attempt = 1; ; attempt += 1) {
      const retry = attempt <= delays.length ? delays[attempt - 1]! : undefined;
      let answer: AdminAnswer;
      try {
        answer = await postForm(url, form, transport);
      } catch (err) {
        if (retry === undefined) throw networkError(url, err, attempt, options.timeoutMs);
        await sleep(retry);
        continue;
      }
      try {
        return check({ ...answer, secrets: token === undefined ? [] : [token] });
      } catch (err) {
        if (retry === undefined || !isServerError(err, answer)) throw err;
        await sleep(retry);
      }
    }
  }

  async function send<T>(path: string, params: AdminParams, idempotent: boolean, check: (answer: AdminAnswer) => T): Promise<T> {
    const url = urlOf(path);
    const token = await options.tokens.token();
    try {
      return await withRetries(url, params, token, idempotent, check);
    } catch (err) {
      if (!(err instanceof AdminAuthError) || !options.tokens.renewable) throw err;
      return withRetries(url, params, await options.tokens.renew(token), idempotent, check);
    }
  }

  return {
    urlOf,
    send: (path, params, { idempotent }) => send(path, params, idempotent, checkResponse),
    sendForList: (path, params, { idempotent }) => send(path, params, idempotent, checkListResponse),
  };
}
