import { AdminApiError } from '../errors.js';
import { checkResponse } from './check-response.js';
import { encodeParams } from './encode-params.js';
import { pathOf } from './redact.js';
import { networkError, postForm } from './transport.js';

/** Options of {@link generateToken}. */
export interface GenerateTokenOptions {
  /** `…/sharing/rest/generateToken` of the portal, or `{base_url}/generateToken`. */
  tokenUrl: string;
  username: string;
  password: string;
  /** Lifetime asked for, in minutes. @defaultValue 60 */
  expirationMinutes?: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
  /** @defaultValue 30000 */
  timeoutMs?: number;
}

/**
 * Exchanges a user name and password for a token (`generateToken`, `client=requestip`). Errors in either body
 * shape throw `AdminApiError`; the password never appears in one. Not retried: the caller decides.
 */
export async function generateToken(options: GenerateTokenOptions): Promise<{ token: string; expires: number }> {
  const expirationMinutes = options.expirationMinutes ?? 60;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const form = encodeParams({
    username: options.username,
    password: options.password,
    client: 'requestip',
    expiration: expirationMinutes,
  });
  const requestedAt = Date.now();
  let answer;
  try {
    answer = await postForm(options.tokenUrl, form, { fetch: options.fetch ?? globalThis.fetch, timeoutMs });
  } catch (err) {
    throw networkError(options.tokenUrl, err, 1, timeoutMs);
  }
  const body = checkResponse({ ...answer, secrets: [options.password] });
  if (typeof body.token !== 'string' || body.token === '') {
    const message = 'the answer carries no token';
    throw new AdminApiError(`${pathOf(options.tokenUrl)}: ${message}`, {
      serverCode: undefined,
      messages: [message],
      url: answer.url,
      response: body,
    });
  }
  // Classic ArcGIS Server sends `expires` as a string; a missing one means the lifetime asked for.
  const expires = Number(body.expires);
  return { token: body.token, expires: Number.isFinite(expires) && expires > 0 ? expires : requestedAt + expirationMinutes * 60_000 };
}
