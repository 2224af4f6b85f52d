import type { ResolvedAdminAuth } from '../arcgis/admin-auth.js';
import { generateToken } from './generate-token.js';

/** Hands out the token of each request. */
export interface TokenProvider {
  /** The token to send, or undefined when the client has no auth. */
  token(): Promise<string | undefined>;
  /** True when a rejected token can be replaced (credentials); false for a static token or none. */
  readonly renewable: boolean;
  /** Drops `rejected` unless it was already replaced, and returns a fresh token. */
  renew(rejected: string | undefined): Promise<string | undefined>;
}

/** Options of {@link createTokenProvider}. */
export interface TokenProviderOptions {
  /** A static token, or credentials exchanged at their `tokenUrl`; none: no token is sent. */
  auth: ResolvedAdminAuth | undefined;
  fetch: typeof fetch;
  timeoutMs: number;
  /** The clock renewal is timed on. @defaultValue Date.now */
  now?: () => number;
}

/** Renew this long before expiry: a minute, or a tenth of the lifetime when that is shorter. */
export const renewalMarginMs = (lifetimeMs: number): number => Math.min(60_000, Math.max(0, lifetimeMs) / 10);

/**
 * A static token as it is; or credentials exchanged with `generateToken`, cached, renewed shortly before they
 * expire, and on `renew`. Concurrent callers share one request for a token in flight.
 */
export function createTokenProvider(options: TokenProviderOptions): TokenProvider {
  const { auth } = options;
  if (auth === undefined || 'token' in auth) {
    const token = auth?.token;
    return { renewable: false, token: async () => token, renew: async () => token };
  }
  const now = options.now ?? Date.now;
  let cached: { token: string; renewAt: number } | undefined;
  let inFlight: Promise<string> | undefined;

  const fetchToken = async (): Promise<string> => {
    const issuedAt = now();
    const { token, expires } = await generateToken({
      tokenUrl: auth.tokenUrl,
      username: auth.username,
      password: auth.password,
      expirationMinutes: auth.expirationMinutes ?? 60,
      fetch: options.fetch,
      timeoutMs: options.timeoutMs,
    });
    // A server clock behind ours must not make every token look expired: then trust the lifetime asked for.
    const expiresAt = expires > issuedAt ? expires : issuedAt + (auth.expirationMinutes ?? 60) * 60_000;
    cached = { token, renewAt: expiresAt - renewalMarginMs(expiresAt - issuedAt) };
    return token;
  };

  const token = async (): Promise<string> => {
    if (cached !== undefined && now() < cached.renewAt) return cached.token;
    inFlight ??= fetchToken().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  return {
    renewable: true,
    token,
    renew: async (rejected) => {
      if (cached !== undefined && cached.token === rejected) cached = undefined;
      return token();
    },
  };
}
