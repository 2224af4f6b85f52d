import type { IncomingHttpHeaders } from 'node:http';
import type { DashboardAuth } from '../../config/load-config.js';
import { computeDigest } from '../../signature/sign.js';
import { bearerToken, safeEqual } from '../bearer-token.js';

/** Name of the cookie the login page sets in token mode. */
export const SESSION_COOKIE = 'geohook_dashboard';

/** How long a login through the login page lasts. */
export const SESSION_SECONDS = 8 * 60 * 60;

/**
 * The session cookie value for a login that ends at `expiresAtSeconds` (Unix time):
 * `<expiry>.<base64url HMAC-SHA256 of "geohook-dashboard:<expiry>" keyed by the token>`. It proves that
 * its holder knew the token without containing it; a new token ends every session.
 */
export function createSession(token: string, expiresAtSeconds: number): string {
  const mac = computeDigest(token, `geohook-dashboard:${expiresAtSeconds}`).toString('base64url');
  return `${expiresAtSeconds}.${mac}`;
}

/** True when `value` is a session cookie made with `token` that has not expired at `nowMs`. */
export function verifySession(token: string, value: string | undefined, nowMs: number): boolean {
  const match = /^(\d{1,12})\.[\w-]{43}$/.exec(value ?? '');
  if (match === null) return false;
  const expiresAtSeconds = Number(match[1]);
  return safeEqual(value!, createSession(token, expiresAtSeconds)) && expiresAtSeconds * 1000 > nowMs;
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const pair of (header ?? '').split(';')) {
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

function basicAuthorized(auth: { username: string; password: string }, authorization: string): boolean {
  const encoded = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(authorization)?.[1];
  if (encoded === undefined) return false;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return false;
  // Both halves are always compared, so the timing does not tell which one was wrong.
  const userMatches = safeEqual(decoded.slice(0, colon), auth.username);
  const passwordMatches = safeEqual(decoded.slice(colon + 1), auth.password);
  return userMatches && passwordMatches;
}

/**
 * True when a request to the dashboard carries its credentials: in token mode `Authorization: Bearer
 * <token>` or a live session cookie (a wrong bearer token is not rescued by a cookie); in basic mode the
 * user name and password of HTTP basic auth.
 */
export function isAuthorized(auth: DashboardAuth, headers: IncomingHttpHeaders, nowMs = Date.now()): boolean {
  const authorization = headers.authorization ?? '';
  if (!('token' in auth)) return basicAuthorized(auth, authorization);
  const bearer = bearerToken(authorization);
  if (bearer !== undefined) return safeEqual(bearer, auth.token);
  return verifySession(auth.token, readCookie(headers.cookie, SESSION_COOKIE), nowMs);
}
