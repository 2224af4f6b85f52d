import { AdminApiError, AdminAuthError } from '../errors.js';

/** What `ADMIN_URL` should look like, for the messages below. */
const ADMIN_ROOTS =
  'the admin root, ending in /admin, e.g. https://gis.example.com/arcgis/admin (ArcGIS Online: https://services.arcgis.com/<orgId>/ArcGIS/rest/admin)';

/** Transport errors that mean TLS did not work out, rather than nothing answering. */
const TLS_FAILURE = /SSL|TLS|certificate|EPROTO/i;

/** True when `url` is the admin root itself, its `info`, or a `generateToken` (ArcGIS Online's is on the portal). */
function isRootRequest(url: string, adminUrl: string): boolean {
  const path = new URL(url).pathname.replace(/\/+$/, '');
  const root = new URL(adminUrl).pathname.replace(/\/+$/, '');
  return path === root || path === `${root}/info` || /\/generateToken$/i.test(path);
}

/**
 * Why the admin API at `adminUrl` cannot be used at all, as one line naming the cause, the value and the fix:
 * unreachable, not an admin root (404), no token (499), or credentials refused. `undefined` for any other error
 * (a service the server does not know, an operation refused), which is about one service, not the server.
 */
export function adminUnavailable(err: unknown, adminUrl: string): string | undefined {
  if (!(err instanceof AdminApiError)) return undefined;
  if (err.response === undefined) {
    const hint = TLS_FAILURE.test(err.message)
      ? 'an https ADMIN_URL for an http server, or a certificate this machine does not trust?'
      : 'check ADMIN_URL and that the server is up';
    return `cannot reach the admin API at ${adminUrl}: ${err.message} (${hint})`;
  }
  // A 404 elsewhere is a service the server does not have.
  if (err.serverCode === 404 && isRootRequest(err.url, adminUrl)) {
    return `ADMIN_URL ${adminUrl} is not an admin root (${err.message}): it should be ${ADMIN_ROOTS}`;
  }
  if (err.serverCode === 499) {
    return `the admin API at ${adminUrl} wants a token and got none (${err.message}): set ADMIN_USERNAME and ADMIN_PASSWORD, or ADMIN_TOKEN; if they are set, ADMIN_URL should be ${ADMIN_ROOTS}`;
  }
  if (err instanceof AdminAuthError || /\/generateToken\/?$/i.test(new URL(err.url).pathname)) {
    return `the admin API at ${adminUrl} refused the credentials (${err.message}): check ADMIN_USERNAME and ADMIN_PASSWORD, or ADMIN_TOKEN`;
  }
  return undefined;
}
