import { setTimeout as sleepMs } from 'node:timers/promises';
import type { WebhookSettings } from '../../arcgis/webhook-settings.js';
import { messageOf } from '../../errors.js';
import type { DeliveryAttempt, DeliveryRecord } from '../types.js';
import type { BuiltPayload } from './build-payload.js';
import type { PostHook } from './post-hook.js';

/** The settings one delivery follows. */
export type RetrySettings = Pick<
  WebhookSettings,
  'notificationAttempts' | 'notificationTimeOutInSeconds' | 'notificationElapsedTimeInSeconds'
>;

/** Injectable time and transport of {@link deliver}, so tests run in milliseconds. */
export interface DeliverOptions {
  /** Sends one POST. */
  post: PostHook;
  /**
   * Turns the settings' seconds into the milliseconds actually waited.
   * @defaultValue `(seconds) => seconds * 1000`
   */
  secondsToMs?: ((seconds: number) => number) | undefined;
  /**
   * Waits between attempts; must reject when `signal` aborts.
   * @defaultValue `setTimeout` of `node:timers/promises`
   */
  sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined;
  /**
   * Timestamps of the attempts (the emulator clock).
   * @defaultValue `Date.now`
   */
  now?: () => number;
  /** Aborts the whole delivery: the attempt in flight and any wait. @defaultValue never */
  signal?: AbortSignal;
}

type ResolvedOptions = { [K in keyof DeliverOptions]-?: NonNullable<DeliverOptions[K]> };

const defaultSleep = (ms: number, signal: AbortSignal): Promise<void> => sleepMs(ms, undefined, { signal });

/** A short, fixed description of why an attempt got no answer. */
function describeError(err: unknown, timeoutSeconds: number, why: 'closing' | 'timeout' | undefined): string {
  if (why === 'closing') return 'aborted: the emulator is closing';
  if (why === 'timeout') return `timeout: no answer within ${timeoutSeconds} s`;
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  return `network error: ${typeof code === 'string' ? code : messageOf(err)}`;
}

/** One POST, at most `timeoutMs` long; pushes the attempt onto the record and tells whether it got a 2xx. */
async function attempt(record: DeliveryRecord, payload: BuiltPayload, settings: RetrySettings, options: ResolvedOptions): Promise<boolean> {
  const current: DeliveryAttempt = { at: options.now() };
  record.attempts.push(current);
  const headers: Record<string, string> = { 'content-type': payload.contentType, 'user-agent': 'geohook-emulator' };
  if (payload.signature !== undefined) headers[payload.signatureHeader] = payload.signature;
  // One controller per attempt, its timer cleared and its link to the engine's signal removed when the
  // attempt ends: AbortSignal.timeout/any would keep a timer and a listener alive per attempt on Node 20.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.secondsToMs(settings.notificationTimeOutInSeconds));
  const onClose = (): void => controller.abort();
  options.signal.addEventListener('abort', onClose, { once: true });
  try {
    const status = await options.post(record.hookUrl, { headers, body: payload.body, signal: controller.signal });
    current.statusCode = status;
    return status >= 200 && status < 300;
  } catch (err) {
    const why = options.signal.aborted ? 'closing' : timedOut ? 'timeout' : undefined;
    current.error = describeError(err, settings.notificationTimeOutInSeconds, why);
    return false;
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onClose);
  }
}

/**
 * Delivers `payload` to `record.hookUrl`: up to `notificationAttempts` POSTs, each given
 * `notificationTimeOutInSeconds` to answer 2xx, `notificationElapsedTimeInSeconds` apart after a failed
 * one. A non-2xx answer, a timeout and a network error are all failed attempts. Every attempt is pushed
 * onto `record.attempts` as it starts; `record.outcome` ends `delivered` or `failed`. Never rejects.
 */
export async function deliver(
  record: DeliveryRecord,
  payload: BuiltPayload,
  settings: RetrySettings,
  options: DeliverOptions,
): Promise<DeliveryRecord> {
  const resolved: ResolvedOptions = {
    post: options.post,
    secondsToMs: options.secondsToMs ?? ((seconds: number) => seconds * 1000),
    sleep: options.sleep ?? defaultSleep,
    now: options.now ?? Date.now,
    signal: options.signal ?? new AbortController().signal,
  };
  const attempts = Math.max(1, Math.floor(settings.notificationAttempts));
  for (let n = 1; n <= attempts; n += 1) {
    if (n > 1) {
      try {
        await resolved.sleep(resolved.secondsToMs(settings.notificationElapsedTimeInSeconds), resolved.signal);
      } catch {
        break; // aborted while waiting
      }
    }
    if (await attempt(record, payload, settings, resolved)) {
      record.outcome = 'delivered';
      return record;
    }
    if (resolved.signal.aborted) break;
  }
  record.outcome = 'failed';
  return record;
}
