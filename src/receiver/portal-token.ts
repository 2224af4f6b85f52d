import { GeohookError } from '../errors.js';

/** How long the portal has to answer a token check. */
const CHECK_TIMEOUT_MS = 10_000;

/**
 * Checks a user token with the portal the way ArcGIS clients do: `POST <portal>/sharing/rest/community/self`
 * (`f=json`, the token in the body, never in a URL). Resolves with the user the portal says the token is of;
 * rejects with `GEOHOOK_ERR_PORTAL_TOKEN` for a token it refuses (498, 499, 403, an answer without a user) and
 * `GEOHOOK_ERR_PORTAL_UNAVAILABLE` when it cannot be asked. `portalUrl` comes from configuration only.
 */
export async function portalUserOf(portalUrl: string, token: string, fetchImpl: typeof fetch = fetch): Promise<string> {
  let answer: unknown;
  try {
    const response = await fetchImpl(`${portalUrl}/sharing/rest/community/self`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ f: 'json', token }).toString(),
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      redirect: 'error',
    });
    if (response.status >= 500) throw new Error(`HTTP ${response.status}`);
    answer = await response.json();
  } catch (err) {
    throw new GeohookError('GEOHOOK_ERR_PORTAL_UNAVAILABLE', `the portal did not answer the token check: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const { username, error } = (answer ?? {}) as { username?: unknown; error?: { code?: unknown; message?: unknown } };
  if (typeof username === 'string' && username !== '' && error === undefined) return username;
  const why = error === undefined ? 'it names no user' : `${String(error.code)} ${String(error.message)}`;
  throw new GeohookError('GEOHOOK_ERR_PORTAL_TOKEN', `the portal refused the Survey123 token (${why})`);
}
