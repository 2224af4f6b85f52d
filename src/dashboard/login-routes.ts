import formBody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../receiver/bearer-token.js';
import type { LoginLimiter } from './login-limiter.js';
import { createSession, dashboardCookie, deviceCookie, isKnownDevice, SESSION_COOKIE, SESSION_SECONDS } from './session.js';

/** Options of {@link loginRoutes}. */
export interface LoginRouteOptions {
  /** The dashboard token (`dashboard.auth.token` or DASHBOARD_TOKEN). */
  token: string;
  /** Slows down guessing, shared with the board's own checks. */
  limiter: LoginLimiter;
  /**
   * Mark the session cookie Secure even when the request arrived over plain HTTP: the receiver sits behind a
   * proxy that terminates TLS (PUBLIC_URL is https). @defaultValue false
   */
  secureCookie?: boolean;
}

const WRONG_TOKEN =
  '<p role="alert" data-code="GEOHOOK_ERR_DASHBOARD_AUTH">That is not the dashboard token. <code>geohook up</code> makes a new one ' +
  'each time it starts: open the dashboard link it printed last (DASHBOARD_TOKEN keeps one token across starts).</p>';
const tooManyAttempts = (waitSeconds: number): string =>
  `<p role="alert" data-code="GEOHOOK_ERR_DASHBOARD_RATE_LIMITED">Too many wrong tokens from this address: try again in ${waitSeconds} s.</p>`;
const SIGNED_OUT = '<p role="status">Signed out.</p>';

function loginPage(error: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>geohook dashboard: sign in</title>
<style>
body { font-family: system-ui, sans-serif; background: #151a21; color: #e6e9ee; display: grid; place-items: center; min-height: 100vh; margin: 0; }
form { display: grid; gap: .75rem; width: min(22rem, 90vw); }
input, button { font: inherit; padding: .5rem; }
[role=alert] { color: #ff8a80; margin: 0; }
</style>
</head>
<body>
<form method="post" action="login">
<h1>geohook queues</h1>
<label for="token">Dashboard token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
${error}<button type="submit">Sign in</button>
</form>
</body>
</html>
`;
}

function sendPage(reply: FastifyReply, statusCode: number, error: string): FastifyReply {
  return reply
    .code(statusCode)
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
    .type('text/html; charset=utf-8')
    .send(loginPage(error));
}

/**
 * `GET <prefix>/login`, a form asking for the dashboard token, and `POST <prefix>/login`, which checks it
 * and sets a session cookie holding an HMAC of the token (HttpOnly, SameSite=Strict, Path=<prefix>,
 * Secure over HTTPS or when `secureCookie`) before redirecting to the services page. `GET <prefix>/login?token=…`
 * signs in the same way: the link `geohook up` prints. `<prefix>/logout` (GET or POST) clears the cookie
 * in the browser; changing the token ends every session. Wrong tokens are counted per address by `limiter`,
 * which answers 429 with `Retry-After` while an address must wait.
 */
export async function loginRoutes(app: FastifyInstance, options: LoginRouteOptions): Promise<void> {
  await app.register(formBody, { bodyLimit: 4096 });

  const { limiter } = options;
  const auth = { token: options.token };
  const signIn = async (request: FastifyRequest, reply: FastifyReply, token: unknown): Promise<FastifyReply> => {
    // A browser that signed in before is not slowed down with its address: a guesser there locks no one out.
    const waitSeconds = isKnownDevice(auth, request.headers) ? 0 : limiter.waitSeconds(request.ip);
    if (waitSeconds > 0) return sendPage(reply.header('retry-after', String(waitSeconds)), 429, tooManyAttempts(waitSeconds));
    if (typeof token !== 'string' || !safeEqual(token, options.token)) {
      request.log.info({ waitSeconds: limiter.failed(request.ip) }, 'dashboard login refused');
      return sendPage(reply, 401, WRONG_TOKEN);
    }
    const expiresAtSeconds = Math.floor(Date.now() / 1000) + SESSION_SECONDS;
    const session = createSession(options.token, expiresAtSeconds);
    return reply
      .header('set-cookie', [sessionCookie(request, session, SESSION_SECONDS), deviceCookie(auth, cookieScope(request))])
      .redirect(`${app.prefix}/services`, 303);
  };

  app.get('/login', async (request: FastifyRequest<{ Querystring: { token?: unknown } }>, reply) =>
    request.query.token === undefined ? sendPage(reply, 200, '') : signIn(request, reply, request.query.token),
  );
  app.post('/login', async (request: FastifyRequest<{ Body: { token?: unknown } | undefined }>, reply) =>
    signIn(request, reply, request.body?.token),
  );

  const logout = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> =>
    sendPage(reply.header('set-cookie', sessionCookie(request, '', 0)), 200, SIGNED_OUT);
  app.get('/logout', logout);
  app.post('/logout', logout);

  function cookieScope(request: FastifyRequest): { path: string; secure: boolean } {
    return { path: app.prefix, secure: options.secureCookie === true || request.protocol === 'https' };
  }

  function sessionCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
    return dashboardCookie(SESSION_COOKIE, value, { ...cookieScope(request), maxAgeSeconds });
  }
}
