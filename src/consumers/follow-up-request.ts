import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminAuth } from '../arcgis/admin-auth.js';
import { checkResponse, type AdminAnswer } from '../arcgis-request/check-response.js';
import { encodeParams } from '../arcgis-request/encode-params.js';
import { networkError, postForm } from '../arcgis-request/post-form.js';
import { createTokenProvider, type TokenProvider } from '../arcgis-request/token-provider.js';
import { AdminAuthError } from '../errors.js';
import { followUpError } from './follow-up-urls.js';

/** Options of `fetchChanges` and `fetchJobResult`. */
export interface FollowUpOptions {
  /**
   * A token, or credentials exchanged at `tokenUrl` for tokens that are renewed before expiry and once when
   * the server answers 498/499 (the admin client's {@link AdminAuth}). Pass the same object to every call to
   * share its token. Without `tokenUrl`, tokens come from `<root>/sharing/rest/generateToken`, where `<root>`
   * is the URL up to `/rest/services` (the emulator; a portal on the server's host).
   * @defaultValue no token is sent
   */
  auth?: AdminAuth;
  /** Each request, body included. @defaultValue 10000 */
  timeoutMs?: number;
  /** The whole call: every request and every wait between polls. @defaultValue 60000 */
  deadlineMs?: number;
  /** Wait between two polls of a job still running. @defaultValue 1000 */
  pollIntervalMs?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

/** One follow-up call: its requests share the deadline and the token. */
export interface FollowUpSession {
  /**
   * The checked JSON answer of `url`: POSTed with the token (form `token`, `f=json`; the URL's query is kept)
   * when it is on the origin of `home`, the URL the event gave; fetched with GET and no token elsewhere
   * (a pre-signed result URL), so the token never leaves the server that issued the event.
   */
  read(url: URL, home: URL): Promise<Record<string, unknown>>;
  /** Reads `url` until `done(answer)`, waiting `pollIntervalMs` between reads, within the deadline. */
  poll(url: URL, home: URL, done: (answer: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/** Token providers by `auth` object and token root, so that calls passing the same `auth` share tokens. */
const providers = new WeakMap<AdminAuth, Map<string, TokenProvider>>();

/** `<root>/sharing/rest` of a REST services URL (`<root>` = the URL up to `/rest/services`, else its origin). */
function sharingRestOf(url: URL): string {
  const match = /^(.*?)\/rest\/services(\/|$)/i.exec(url.pathname);
  return `${url.origin}${match?.[1] ?? ''}/sharing/rest`;
}

function providerFor(options: FollowUpOptions, home: URL, fetchFn: typeof fetch, timeoutMs: number): TokenProvider {
  const { auth } = options;
  const baseUrl = sharingRestOf(home);
  if (auth === undefined) return createTokenProvider({ auth, baseUrl, fetch: fetchFn, timeoutMs });
  const byRoot = providers.get(auth) ?? new Map<string, TokenProvider>();
  providers.set(auth, byRoot);
  const provider = byRoot.get(baseUrl) ?? createTokenProvider({ auth, baseUrl, fetch: fetchFn, timeoutMs });
  byRoot.set(baseUrl, provider);
  return provider;
}

/** GETs `url` and reads the whole answer within `timeoutMs`. */
async function getJson(url: string, fetchFn: typeof fetch, timeoutMs: number): Promise<AdminAnswer> {
  const response = await fetchFn(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  return { status: response.status, statusText: response.statusText, body: await response.text(), url };
}

/** Starts a follow-up call: the deadline runs from now. */
export function createFollowUpSession(options: FollowUpOptions): FollowUpSession {
  const fetchFn = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadlineMs = options.deadlineMs ?? 60_000;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const deadline = Date.now() + deadlineMs;

  const remainingMs = (): number => {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw followUpError(`the follow-up did not finish within ${deadlineMs} ms`);
    return remaining;
  };

  /** POSTs `token` (none when undefined) and `f=json` to `url`, or GETs it when `post` is false. */
  async function send(url: URL, post: boolean, token?: string): Promise<Record<string, unknown>> {
    const requestTimeoutMs = Math.min(timeoutMs, remainingMs());
    let answer: AdminAnswer;
    try {
      answer = post
        ? await postForm(url.href, encodeParams({ token }), { fetch: fetchFn, timeoutMs: requestTimeoutMs })
        : await getJson(url.href, fetchFn, requestTimeoutMs);
    } catch (err) {
      // A request cut short by the call's deadline is the deadline's failure, not the server's.
      remainingMs();
      throw networkError(url.href, err, 1, requestTimeoutMs);
    }
    return checkResponse({ ...answer, secrets: token === undefined ? [] : [token] });
  }

  async function read(url: URL, home: URL): Promise<Record<string, unknown>> {
    if (url.origin !== home.origin) return send(url, false);
    const tokens = providerFor(options, home, fetchFn, timeoutMs);
    const token = await tokens.token();
    try {
      return await send(url, true, token);
    } catch (err) {
      if (!(err instanceof AdminAuthError) || !tokens.renewable) throw err;
      return send(url, true, await tokens.renew(token));
    }
  }

  return {
    read,
    async poll(url, home, done) {
      for (;;) {
        const answer = await read(url, home);
        if (done(answer)) return answer;
        await sleep(Math.min(pollIntervalMs, remainingMs()));
      }
    },
  };
}
