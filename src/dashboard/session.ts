import type { IncomingHttpHeaders } from 'node:http';
import type { DashboardAuth } from '../config/load-config.js';
import { bearerToken, safeEqual } from '../receiver/bearer-token.js';
import { computeDigest } from '../signature/sign.js';

/** Name of the cookie the login page sets in token mode. */
export const SESSION_COOKIE = 'geohook_dashboard';

/** How long a login through the login page lasts. */
export const SESSION_SECONDS = 8 * 60 * 60;

/** Name of the cookie that marks a browser which signed in before: it is not slowed down with its address. */
export const DEVICE_COOKIE = 'geohook_device';

/** How long a browser stays known after it last signed in. */
export const DEVICE_SECONDS = 30 * 24 * 60 * 60;

/** `<expiry>.<base64url HMAC-SHA256 of "<purpose>:<expiry>" keyed by secret>`: proves its holder knew the secret. */
function signedMark(secret: string, purpose: string, expiresAtSeconds: number): string {
  return `${expiresAtSeconds}.${computeDigest(secret, `${purpose}:${expiresAtSeconds}`).toString('base64url')}`;
}

/** True when `value` is a mark of `purpose` made with `secret` that has not expired at `nowMs`. */
function verifyMark(secret: string, purpose: string, value: string | undefined, nowMs: number): boolean {
  const match = /^(\d{1,12})\.[\w-]{43}$/.exec(value ?? '');
  if (match === null) return false;
  const expiresAtSeconds = Number(match[1]);
  return safeEqual(value!, signedMark(secret, purpose, expiresAtSeconds)) && expiresAtSeconds * 1000 > nowMs;
}

/**
 * The session cookie value for a login that ends at `expiresAtSeconds` (Unix time):
 * `<expiry>.<base64url HMAC-SHA256 of "geohook-dashboard:<expiry>" keyed by the token>`. It proves that
 * its holder knew the token without containing it; a new token ends every session.
 */
export function createSession(token: string, expiresAtSeconds: number): string {
  return signedMark(token, 'geohook-dashboard', expiresAtSeconds);
}

/** True when `value` is a session cookie made with `token` that has not expired at `nowMs`. */
export function verifySession(token: string, value: string | undefined, nowMs: number): boolean {
  return verifyMark(token, 'geohook-dashboard', value, nowMs);
}

/** What a device mark is keyed by: the token, or the user name and password. New credentials forget every browser. */
const markSecret = (auth: DashboardAuth): string => ('token' in auth ? auth.token : `${auth.username}:${auth.password}`);

/**
 * The device cookie value given to a browser that signed in, until `expiresAtSeconds`: the mark of a browser
 * that knew the credentials (OWASP's device cookie). Unlike a session it opens nothing: it only spares its holder
 * the wait an address gets after wrong guesses, so that a guesser behind the same proxy locks no administrator out.
 */
export function createDeviceMark(auth: DashboardAuth, expiresAtSeconds: number): string {
  return signedMark(markSecret(auth), 'geohook-device', expiresAtSeconds);
}

/** True when the request carries a live device cookie made with the dashboard's credentials. */
export function isKnownDevice(auth: DashboardAuth, headers: IncomingHttpHeaders, nowMs = Date.now()): boolean {
  return verifyMark(markSecret(auth), 'geohook-device', readCookie(headers.cookie, DEVICE_COOKIE), nowMs);
}

/** A `Set-Cookie` value of the dashboard: HttpOnly, SameSite=Strict, on `path`, Secure when `secure`. */
export function dashboardCookie(name: string, value: string, options: { path: string; maxAgeSeconds: number; secure: boolean }): string {
  const secure = options.secure ? '; Secure' : '';
  return `${name}=${value}; Path=${options.path}; Max-Age=${options.maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

/** The `Set-Cookie` value that marks the browser as known for {@link DEVICE_SECONDS} from `nowMs`. */
export function deviceCookie(auth: DashboardAuth, options: { path: string; secure: boolean }, nowMs = Date.now()): string {
  const mark = createDeviceMark(auth, Math.floor(nowMs / 1000) + DEVICE_SECONDS);
  return dashboardCookie(DEVICE_COOKIE, mark, { ...options, maxAgeSeconds: DEVICE_SECONDS });
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
