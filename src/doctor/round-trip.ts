import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminClient } from '../admin/types.js';
import type { ServiceName } from '../arcgis/service-name.js';
import type { Webhook } from '../arcgis/webhook.js';
import { reasonOf } from '../arcgis-request/transport.js';
import { sign } from '../signature/sign.js';

/** Longest wait for the receiver's answer to doctor's delivery. */
const DELIVERY_TIMEOUT_MS = 10_000;

/** What the live round trip proved (`roundTrip` of `geohook doctor --json`). */
export interface RoundTrip {
  ok: boolean;
  /** `server`: the GIS server sent its test delivery (ArcGIS Online's `status`); `signed`: doctor sent one signed with the webhook's key. */
  via: 'server' | 'signed';
  service: ServiceName;
  hookUrl: string;
  /** The receiver's answer to doctor's delivery (`signed` only). */
  status?: number;
  /** How long the receiver took to acknowledge doctor's delivery, ms (`signed` only). */
  ackMs?: number;
  /** Whether this geohook's Redis recorded the delivery (`<prefix>:pings`). */
  recorded: boolean;
  message: string;
}

/** Options of {@link roundTrip}. */
export interface RoundTripOptions {
  client: AdminClient;
  service: ServiceName;
  webhook: Webhook;
  /** The header doctor's delivery carries its signature in (the first of SIGNATURE_HEADERS). */
  signatureHeader: string;
  /** The last ping the receivers recorded for the hook, epoch ms (the hash `<prefix>:pings`); `undefined`: none, or Redis unreachable. */
  lastPing: () => Promise<number | undefined>;
  /** Longest wait for the record. @defaultValue 10000 */
  timeoutMs?: number;
}

/** The test payload of ArcGIS Online's `status` operation: the receiver records it and hands nothing to consumers. */
const testPayload = (service: ServiceName): string =>
  JSON.stringify([{ name: 'geohook-doctor', serviceName: service, lastUpdatedTime: Date.now(), events: ['NoContent'] }]);

/** Waits until a ping newer than `since` is recorded. */
async function recordedSince(options: RoundTripOptions, since: number): Promise<boolean> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    if (((await options.lastPing()) ?? 0) >= since) return true;
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
}

/** A redirect of the hookUrl, not followed: the signed delivery goes only where the webhook says. */
function redirectMessage(response: Response, hookUrl: string): string {
  const location = response.headers.get('location');
  const target = location !== null && URL.canParse(location, hookUrl) ? new URL(location, hookUrl) : undefined;
  const to = target === undefined ? '' : ` to ${target.origin}${target.pathname}`;
  return `the hookUrl answered ${response.status}, a redirect${to} (not followed): register the receiver's final URL (PUBLIC_URL)`;
}

/**
 * A live delivery through the webhook's hookUrl, proven by this geohook's Redis: ArcGIS Online sends its test
 * payload (`status`); elsewhere doctor sends the same payload signed with the webhook's key, as the server would.
 * The receiver acknowledges a test payload and records it without queuing an event.
 */
export async function roundTrip(options: RoundTripOptions): Promise<RoundTrip> {
  const { client, service, webhook } = options;
  const since = Date.now();
  const base = { service, hookUrl: webhook.hookUrl };
  if (client.product === 'online') {
    await client.webhooks.ping(service, webhook.id);
    const recorded = await recordedSince(options, since);
    const message = recorded
      ? `the server's test delivery reached the receiver and was recorded`
      : `the server sent its test delivery, but this geohook's Redis has no record of it: the receiver is down, refused its signature, or writes to another Redis or prefix`;
    return { ok: recorded, via: 'server', ...base, recorded, message };
  }
  const body = testPayload(service);
  const started = performance.now();
  let response: Response;
  try {
    response = await fetch(webhook.hookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [options.signatureHeader]: sign(webhook.signatureKey, body) },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
  } catch (err) {
    const message = `nothing answers at ${webhook.hookUrl} (${reasonOf(err, DELIVERY_TIMEOUT_MS)}): the receiver is down or PUBLIC_URL does not reach it`;
    return { ok: false, via: 'signed', ...base, recorded: false, message };
  }
  const answer = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
  const ackMs = Math.round(performance.now() - started);
  const answered = { via: 'signed' as const, ...base, status: response.status, ackMs };
  if (response.status === 401)
    return {
      ok: false,
      ...answered,
      recorded: false,
      message: `the receiver refused the signature (${answer.code ?? 401}): it holds a different key than the webhook`,
    };
  if (response.status >= 300 && response.status <= 399)
    return { ok: false, ...answered, recorded: false, message: redirectMessage(response, webhook.hookUrl) };
  if (response.status !== 202)
    return { ok: false, ...answered, recorded: false, message: `the receiver answered ${response.status} ${answer.message ?? ''}`.trim() };
  const recorded = await recordedSince(options, since);
  const message = recorded
    ? `a delivery signed with the webhook's key was verified and recorded in ${ackMs} ms`
    : `the receiver acknowledged the delivery, but this geohook's Redis has no record of it: it writes to another Redis or prefix`;
  return { ok: recorded, ...answered, recorded, message };
}
