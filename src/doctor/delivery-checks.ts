import type { WebhookSettings } from '../arcgis/webhook-settings.js';
import { reasonOf } from '../arcgis-request/transport.js';
import { failed, passed, type Check } from './check.js';

/** Longest wait for the hookUrl's answer. */
const ANSWER_TIMEOUT_MS = 10_000;

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The organization's delivery settings against this receiver (ArcGIS Enterprise): the per-attempt timeout
 * against the acknowledgement measured by the round trip, and the number of attempts.
 */
export function settingsChecks(settings: WebhookSettings | undefined, ackMs: number | undefined, readError: string | undefined): Check[] {
  if (settings === undefined) {
    const message = `the webhook settings could not be read (${readError ?? 'no answer'}): timeout and retries not checked`;
    return [failed('settings.read', message, 'run doctor as an organization administrator (ADMIN_USERNAME)', 'warning')];
  }
  const timeoutMs = settings.notificationTimeOutInSeconds * 1000;
  // Four times the acknowledgement, within the setting's bounds (1 to 60 s).
  const raise = `geohook admin settings --notification-timeout ${Math.min(60, Math.max(10, Math.ceil(((ackMs ?? 0) * 4) / 1000)))}`;
  const timeout =
    ackMs === undefined
      ? failed(
          'settings.timeout',
          'no acknowledgement was measured (the round trip did not reach the receiver)',
          'see roundTrip',
          'warning',
        )
      : ackMs * 4 <= timeoutMs
        ? passed(
            'settings.timeout',
            `the receiver acknowledged in ${ackMs} ms; the server waits ${settings.notificationTimeOutInSeconds} s`,
          )
        : failed(
            'settings.timeout',
            `the receiver acknowledged in ${ackMs} ms, too close to the server's ${settings.notificationTimeOutInSeconds} s per attempt`,
            raise,
            ackMs < timeoutMs ? 'warning' : 'error',
          );
  const attempts =
    settings.notificationAttempts >= 2
      ? passed('settings.attempts', `the server tries each delivery ${settings.notificationAttempts} times`, 'warning')
      : failed(
          'settings.attempts',
          'the server tries each delivery once: one lost request is a lost delivery and a failure toward deactivation',
          'geohook admin settings --notification-attempts 3',
          'warning',
        );
  return [timeout, attempts];
}

/** The hookUrl is HTTPS, or plain HTTP on loopback only (a warning). */
export function httpsCheck(hookUrl: string): Check {
  const url = new URL(hookUrl);
  if (url.protocol === 'https:' || LOOPBACK.test(url.hostname))
    return passed('hook-url.https', `${hookUrl} is ${url.protocol === 'https:' ? 'HTTPS' : 'on loopback'}`, 'warning');
  return failed(
    'hook-url.https',
    `${hookUrl} is plain HTTP: deliveries and their signatures cross the network unencrypted (ArcGIS Online requires HTTPS)`,
    'put geohook behind a TLS proxy and set PUBLIC_URL to its https:// URL',
    'warning',
  );
}

/** Something answers HTTP at the hookUrl. */
export async function answersCheck(hookUrl: string, receiver: 'up' | 'serve'): Promise<Check> {
  try {
    // Marked as the probe (the receiver's `geohook-probe` header): its refusal is logged at debug, not as news.
    const response = await fetch(hookUrl, { headers: { 'geohook-probe': 'doctor' }, signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
    await response.body?.cancel();
    return passed('hook-url.answers', `${hookUrl} answers (HTTP ${response.status} to a GET)`);
  } catch (err) {
    return failed(
      'hook-url.answers',
      `nothing answers at ${hookUrl} (${reasonOf(err, ANSWER_TIMEOUT_MS)})`,
      receiver === 'up'
        ? 'start geohook up (npm start) again'
        : 'start geohook serve, and set PUBLIC_URL to the URL the GIS server reaches it at',
    );
  }
}
