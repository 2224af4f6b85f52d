import { randomBytes } from 'node:crypto';
import { sign } from '../signature/sign.js';

/** How long the hookUrl has to answer the challenge. */
const CRC_TIMEOUT_MS = 5000;

/**
 * ArcGIS Online's challenge-response check of a webhook's `hookUrl`: `GET <hookUrl>?crc_token=<random>`,
 * which must answer `{"response_token":"sha256=<base64 HMAC-SHA256(signatureKey, crc_token)>"}`. Returns
 * undefined when the check passes, else why it failed.
 */
export async function challengeResponseCheck(
  hookUrl: string,
  signatureKey: string,
  fetchImpl: typeof fetch = fetch,
): Promise<string | undefined> {
  const token = randomBytes(16).toString('hex');
  const url = new URL(hookUrl);
  url.searchParams.set('crc_token', token);
  let answer: Response;
  try {
    answer = await fetchImpl(url, { redirect: 'manual', signal: AbortSignal.timeout(CRC_TIMEOUT_MS) });
  } catch (err) {
    return `the hookUrl did not answer the challenge-response check (${(err as Error).message})`;
  }
  const text = await answer.text().catch(() => '');
  if (answer.status !== 200) return `the hookUrl answered the challenge-response check with HTTP ${answer.status}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'the hookUrl answered the challenge-response check with a body that is not JSON';
  }
  const responseToken = typeof body === 'object' && body !== null ? (body as { response_token?: unknown }).response_token : undefined;
  if (responseToken !== sign(signatureKey, token)) return 'the hookUrl answered the challenge-response check with a wrong response_token';
  return undefined;
}
