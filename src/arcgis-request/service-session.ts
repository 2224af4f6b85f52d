import { setTimeout as sleep } from 'node:timers/promises';
import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { namedUrls } from '../arcgis/named-urls.js';
import type { TrustedUrls } from '../arcgis/trusted-urls.js';
import { AdminAuthError, GeohookError } from '../errors.js';
import { checkResponse, throwAnswerError, type AdminAnswer, type JsonParser } from './check-response.js';
import { encodeParams } from './encode-params.js';
import { createTokenProvider, type TokenProvider } from './token-provider.js';
import { exchangeBody, getJson, networkError, postForm, type BodyConsumer } from './transport.js';

/** Options of {@link createServiceSession}. */
export interface ServiceSessionOptions {
  /**
   * Where requests may go: a URL these trust is sent the token; any other only when a trusted answer names it
   * on its own origin or on `storage`, without it.
   */
  trusted: TrustedUrls;
  /**
   * Signed storage a trusted answer may name (or redirect a result to) besides its own origin: http(s) origins,
   * `*.` before a host for any of its subdomains. A malformed entry throws a TypeError.
   * @defaultValue ['https://*.arcgis.com'] (ArcGIS Online's storage)
   */
  storage?: readonly string[];
  /** A token, or credentials exchanged at their `tokenUrl`. @defaultValue no token is sent */
  auth?: ResolvedAdminAuth;
  /** Each request, body included. @defaultValue 10000 */
  timeoutMs?: number;
  /** The whole session: every request and every wait between polls. @defaultValue 60000 */
  deadlineMs?: number;
  /** Wait between two polls of a job still running (the first, when it grows up to `maxPollIntervalMs`). @defaultValue 1000 */
  pollIntervalMs?: number;
  /** The longest wait between two polls: each wait doubles up to it. @defaultValue pollIntervalMs (the wait does not grow) */
  maxPollIntervalMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

/** Requests to a GIS server's REST services that share a deadline and a token (docs/production.md#what-goes-where). */
export interface ServiceSession {
  /**
   * The checked JSON answer of `url`. A URL the session trusts is POSTed the token (form `token`, `f=json`; the
   * URL's query is kept). Another one is read only when `namedBy`, a trusted URL, named it in its answer (a
   * job's status, a pre-signed result) on its own origin or on signed storage: with GET, and no token, and its
   * answer is not repeated in errors. Anything else is refused, unsent (`GEOHOOK_ERR_UNTRUSTED_URL`). No request
   * follows a redirect.
   */
  read(url: URL, namedBy?: URL, parse?: JsonParser): Promise<Record<string, unknown>>;
  /**
   * {@link read} for a file a trusted answer names (an `extractChanges` result): a 301, 302 or 303 to the same
   * origin or to signed storage is followed with GET and no token, at most three times; one elsewhere is refused.
   */
  download(url: URL, namedBy: URL, parse?: JsonParser): Promise<Record<string, unknown>>;
  /**
   * {@link download} for a file too large to hold (an `extractChanges` result): its body goes to `consume` as it
   * arrives, and the top-level values of what `consume` made of it are checked as any answer is (an error inside an
   * HTTP 200 body throws, a refused token is renewed once and the download made again).
   */
  downloadTo<T extends StreamedAnswer>(url: URL, namedBy: URL, consume: BodyConsumer<T>): Promise<T>;
  /**
   * {@link read} of a trusted URL whose answer is large (a page of `query`): its body goes to `consume` as it
   * arrives, checked as {@link downloadTo} checks it. No redirect is followed.
   */
  readTo<T extends StreamedAnswer>(url: URL, consume: BodyConsumer<T>): Promise<T>;
  /** Reads `url` until `done(answer)`, waiting `pollIntervalMs` between reads (doubling up to `maxPollIntervalMs`), within the deadline. */
  poll(url: URL, namedBy: URL | undefined, done: (answer: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/** What a streamed answer was made into: its top-level values, and a way to let go of it (a file deleted). */
export interface StreamedAnswer {
  root: Readonly<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The error of a URL no configuration trusts; its query is left out (it may hold anything a payload put there). */
export const untrustedUrl = (url: URL, trusted: TrustedUrls): GeohookError =>
  new GeohookError(
    'GEOHOOK_ERR_UNTRUSTED_URL',
    `${url.origin}${url.pathname} is not under a trusted URL (${trusted.entries.join(', ') || 'none is configured'}): no request was sent`,
  );

/** The error of a URL a trusted answer names elsewhere than its own origin and signed storage: nothing is sent to it. */
const refusedNamedUrl = (url: URL, namedBy: URL, storage: readonly string[]): GeohookError =>
  new GeohookError(
    'GEOHOOK_ERR_UNTRUSTED_URL',
    `${url.origin}${url.pathname}, named by an answer of ${namedBy.origin}, is neither on that origin nor on signed storage (${storage.join(', ') || 'none is configured'}): no request was sent`,
  );

/** Token providers by credentials object, so that sessions given the same object share its token. */
const providers = new WeakMap<ResolvedAdminAuth, TokenProvider>();

function providerOf(auth: ResolvedAdminAuth | undefined, fetchFn: typeof fetch, timeoutMs: number): TokenProvider {
  if (auth === undefined) return createTokenProvider({ auth, fetch: fetchFn, timeoutMs });
  const provider = providers.get(auth) ?? createTokenProvider({ auth, fetch: fetchFn, timeoutMs });
  providers.set(auth, provider);
  return provider;
}

/** Redirects {@link ServiceSession.download} follows; each is a GET without credentials. */
const FOLLOWED_REDIRECTS = new Set([301, 302, 303]);
const MAX_REDIRECTS = 3;

/** Starts a session: the deadline runs from now. */
export function createServiceSession(options: ServiceSessionOptions): ServiceSession {
  const { trusted } = options;
  const named = namedUrls(options.storage);
  const fetchFn = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadlineMs = options.deadlineMs ?? 60_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const maxPollIntervalMs = Math.max(pollIntervalMs, options.maxPollIntervalMs ?? pollIntervalMs);
  const deadline = Date.now() + deadlineMs;
  const tokens = providerOf(options.auth, fetchFn, timeoutMs);

  const remainingMs = (): number => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', `the follow-up did not finish within ${deadlineMs} ms`);
    return remaining;
  };

  /** POSTs `token` (none when undefined) and `f=json` to `url`, or GETs it when `post` is false. */
  async function exchange(url: URL, post: boolean, token?: string): Promise<AdminAnswer> {
    const transport = { fetch: fetchFn, timeoutMs: Math.min(timeoutMs, remainingMs()) };
    try {
      return post ? await postForm(url.href, encodeParams({ token }), transport) : await getJson(url.href, transport);
    } catch (err) {
      // A request cut short by the session's deadline is the deadline's failure, not the server's.
      remainingMs();
      throw networkError(url.href, err, 1, transport.timeoutMs);
    }
  }

  /** The target of a redirect `from` answered, once it is known to be one a download may follow (see {@link namedUrls}). */
  function redirectTarget(location: string, from: URL): URL {
    const target = new URL(location);
    if (!named.allows(target, from)) throw refusedNamedUrl(target, from, named.storage);
    return target;
  }

  /**
   * The checked answer of `url`, once the redirects a download follows (each a GET without credentials) are
   * followed. The answer of a URL no configuration trusts is not repeated in an error.
   */
  async function settle(
    answer: AdminAnswer,
    url: URL,
    token: string | undefined,
    follow: boolean,
    parse?: JsonParser,
  ): Promise<Record<string, unknown>> {
    let current = answer;
    let at = url;
    let secret = token;
    for (
      let hops = 0;
      follow && hops < MAX_REDIRECTS && FOLLOWED_REDIRECTS.has(current.status) && current.location !== undefined;
      hops += 1
    ) {
      at = redirectTarget(current.location, at);
      current = await exchange(at, false);
      secret = undefined;
    }
    const secrets = secret === undefined ? [] : [secret];
    return checkResponse({ ...current, secrets, quote: trusted.trusts(at), ...(parse === undefined ? {} : { parse }) });
  }

  /** POSTs the token to a trusted URL; a refused token is renewed once. */
  async function sendTrusted(url: URL, follow: boolean, parse?: JsonParser): Promise<Record<string, unknown>> {
    const token = await tokens.token();
    try {
      return await settle(await exchange(url, true, token), url, token, follow, parse);
    } catch (err) {
      if (!(err instanceof AdminAuthError) || !tokens.renewable) throw err;
      const renewed = await tokens.renew(token);
      return settle(await exchange(url, true, renewed), url, renewed, follow, parse);
    }
  }

  async function request(url: URL, namedBy: URL | undefined, follow: boolean, parse?: JsonParser): Promise<Record<string, unknown>> {
    if (trusted.trusts(url)) return sendTrusted(url, follow, parse);
    if (namedBy === undefined || !trusted.trusts(namedBy)) throw untrustedUrl(url, trusted);
    if (!named.allows(url, namedBy)) throw refusedNamedUrl(url, namedBy, named.storage);
    return settle(await exchange(url, false), url, undefined, follow, parse);
  }

  const read = (url: URL, namedBy?: URL, parse?: JsonParser): Promise<Record<string, unknown>> => request(url, namedBy, false, parse);

  /** {@link exchange} for a body handed to `consume`; its network failures are reported the same way. */
  async function exchangeTo<T>(url: URL, token: string | undefined, post: boolean, consume: BodyConsumer<T>) {
    const transport = { fetch: fetchFn, timeoutMs: Math.min(timeoutMs, remainingMs()) };
    try {
      return await exchangeBody(url.href, post ? encodeParams({ token }) : undefined, transport, consume);
    } catch (err) {
      if (err instanceof GeohookError) throw err;
      remainingMs();
      throw networkError(url.href, err, 1, transport.timeoutMs);
    }
  }

  /** One streamed answer of `url` (with `follow`, redirects followed without the token), its top-level values checked. */
  async function streamOnce<T extends StreamedAnswer>(
    url: URL,
    token: string | undefined,
    post: boolean,
    consume: BodyConsumer<T>,
    follow = true,
  ): Promise<T> {
    let result = await exchangeTo(url, token, post, consume);
    let at = url;
    let secret = token;
    for (let hops = 0; follow && 'answer' in result && hops < MAX_REDIRECTS && FOLLOWED_REDIRECTS.has(result.answer.status); hops += 1) {
      if (result.answer.location === undefined) break;
      at = redirectTarget(result.answer.location, at);
      result = await exchangeTo(at, undefined, false, consume);
      secret = undefined;
    }
    const secrets = secret === undefined ? [] : [secret];
    const quote = trusted.trusts(at);
    // Not streamed: an error or a redirect, which the checker throws for.
    if ('answer' in result) throwAnswerError({ ...result.answer, secrets, quote });
    try {
      checkResponse({ status: 200, statusText: 'OK', body: JSON.stringify(result.value.root), url: url.href, secrets, quote });
    } catch (err) {
      await result.value.close();
      throw err;
    }
    return result.value;
  }

  /** {@link streamOnce} of a trusted URL with the token; a refused token is renewed once. */
  async function streamTrusted<T extends StreamedAnswer>(url: URL, consume: BodyConsumer<T>, follow: boolean): Promise<T> {
    const token = await tokens.token();
    try {
      return await streamOnce(url, token, true, consume, follow);
    } catch (err) {
      if (!(err instanceof AdminAuthError) || !tokens.renewable) throw err;
      return streamOnce(url, await tokens.renew(token), true, consume, follow);
    }
  }

  async function downloadTo<T extends StreamedAnswer>(url: URL, namedBy: URL, consume: BodyConsumer<T>): Promise<T> {
    if (trusted.trusts(url)) return streamTrusted(url, consume, true);
    if (!trusted.trusts(namedBy)) throw untrustedUrl(url, trusted);
    if (!named.allows(url, namedBy)) throw refusedNamedUrl(url, namedBy, named.storage);
    return streamOnce(url, undefined, false, consume);
  }

  async function readTo<T extends StreamedAnswer>(url: URL, consume: BodyConsumer<T>): Promise<T> {
    if (!trusted.trusts(url)) throw untrustedUrl(url, trusted);
    return streamTrusted(url, consume, false);
  }

  return {
    read,
    download: (url, namedBy, parse) => request(url, namedBy, true, parse),
    downloadTo,
    readTo,
    async poll(url, namedBy, done) {
      for (let waitMs = pollIntervalMs; ; waitMs = Math.min(waitMs * 2, maxPollIntervalMs)) {
        const answer = await read(url, namedBy);
        if (done(answer)) return answer;
        await sleep(Math.min(waitMs, remainingMs()));
      }
    },
  };
}
