import type { AdminClient } from '../admin/types.js';
import { parseServiceName, type ServiceName } from '../arcgis/service-name.js';
import type { WebhookSettings } from '../arcgis/webhook-settings.js';
import type { Webhook } from '../arcgis/webhook.js';
import { AdminApiError } from '../errors.js';
import { failed, passed, type Check } from './check.js';

/** What geohook's webhook on a service must be. */
export interface WebhookExpectation {
  client: AdminClient;
  /** `$PUBLIC_URL/webhooks/default`: how geohook recognises its webhook. */
  hookUrl: string;
  /** The keys the receiver verifies with; `undefined` when they could not be read (Redis unreachable). */
  keys: readonly string[] | undefined;
  /** The feature-service triggers configured (CHANGE_TYPES). */
  changeTypes: readonly string[];
  /** The organization's delivery settings; `undefined` when they could not be read. */
  settings: WebhookSettings | undefined;
  /** Now, epoch ms. */
  now: number;
  /** How the receiver checked was started (see `DoctorOptions.receiver`). @defaultValue 'serve' */
  receiver?: 'up' | 'serve';
}

/** The registration that sets a webhook right, as the receiver was started. */
const registrationFix = (receiver: 'up' | 'serve' | undefined): string =>
  receiver === 'up'
    ? 'the geohook up running here does it at its next registration pass (restart it to do it now)'
    : 'a geohook serve with this REGISTER does it at its next registration pass (registration.intervalSeconds)';

/** The webhook checks of a service, and geohook's webhook when there is one. */
export interface WebhookChecks {
  checks: Check[];
  webhook: Webhook | undefined;
}

const DAY_MS = 86_400_000;

function keyCheck(
  service: ServiceName,
  webhook: Webhook,
  keys: readonly string[] | undefined,
  receiver: 'up' | 'serve' | undefined,
): Check {
  const fix = `set the key the receiver holds: ${registrationFix(receiver)}; or geohook admin rotate-key`;
  if (webhook.signatureKey === '')
    return failed('webhook.signature-key', `geohook's webhook on ${service} has no signature key: its deliveries are unsigned`, fix);
  if (keys === undefined) {
    const message = `the receiver's keys could not be read from Redis: the webhook's key is not checked`;
    return failed('webhook.signature-key', message, 'set REDIS_URL (or --redis-url) to the Redis of the receivers', 'warning');
  }
  return keys.includes(webhook.signatureKey)
    ? passed('webhook.signature-key', `the webhook signs with a key the receiver holds`)
    : failed(
        'webhook.signature-key',
        `the webhook on ${service} signs with a key the receiver does not hold: its deliveries are refused (401)`,
        fix,
      );
}

function changeTypesCheck(service: ServiceName, webhook: Webhook, configured: readonly string[]): Check {
  const listened = new Set(webhook.changeTypes);
  const missing = listened.has('*') ? [] : configured.filter((type) => !listened.has(type));
  if (missing.length === 0) return passed('webhook.change-types', `the webhook fires on ${webhook.changeTypes.join(',')}`);
  return failed(
    'webhook.change-types',
    `the webhook on ${service} does not fire on ${missing.join(', ')} (it listens to ${webhook.changeTypes.join(',')})`,
    `geohook admin edit ${service} ${webhook.id} --change-types ${configured.join(',')}`,
  );
}

/** Failed deliveries in the deactivation window, against the number that deactivates the webhook. */
async function failuresCheck(service: ServiceName, webhook: Webhook, expectation: WebhookExpectation, keyHeld: boolean): Promise<Check> {
  const { client, settings, now } = expectation;
  let statuses: { invoked: boolean; invokedTimestamp: number }[];
  try {
    statuses = await client.webhooks.notificationStatus(service, webhook.id);
  } catch (err) {
    if (!(err instanceof AdminApiError) || err.response === undefined) throw err;
    return passed('webhook.failures', `the server reports no delivery status (notificationStatus came in 11.2)`, 'warning');
  }
  const days = settings?.daysInPast ?? 5;
  const limit = settings?.numberOfFailures ?? 5;
  const count = statuses.filter((status) => !status.invoked && status.invokedTimestamp > now - days * DAY_MS).length;
  if (count === 0) return passed('webhook.failures', `no failed delivery in the last ${days} days`, 'warning');
  const left = Math.max(0, limit - count);
  return failed(
    'webhook.failures',
    `${count} failed deliver${count === 1 ? 'y' : 'ies'} in the last ${days} days: ${left} more and the server deactivates the webhook (${limit} in ${days} days)`,
    keyHeld
      ? `make the receiver answer within notificationTimeOutInSeconds (see settings.timeout), then clear the count: geohook admin activate-all ${service}`
      : `they are refused signatures (401: see webhook.signature-key); once the key is right, clear the count: geohook admin activate-all ${service}`,
    left <= 1 ? 'error' : 'warning',
  );
}

/**
 * Whether geohook's webhook is on `service` and as it must be (docs/troubleshooting.md): there, pointing at this
 * receiver, active, signed with a key the receiver holds, firing on the configured change types, and how close
 * its failures bring it to the deactivation policy (ArcGIS Enterprise).
 */
export async function checkWebhook(service: ServiceName, expectation: WebhookExpectation): Promise<WebhookChecks> {
  const { client, hookUrl } = expectation;
  const all = await client.webhooks.listAll(service);
  const webhook = all.find((candidate) => candidate.hookUrl === hookUrl);
  if (webhook === undefined) {
    const elsewhere = all.map((candidate) => candidate.hookUrl);
    const seen = elsewhere.length === 0 ? 'it has no webhook' : `its webhooks point at ${elsewhere.join(', ')}`;
    return {
      checks: [
        failed(
          'webhook.registered',
          `no webhook on ${service} points at this receiver (${hookUrl}); ${seen}`,
          expectation.receiver === 'up'
            ? `${registrationFix('up')}; it registers only the services of its emulator`
            : `run geohook serve with REGISTER including ${service} and PUBLIC_URL set to the URL the GIS server reaches it at: it creates the webhook and heals it`,
        ),
      ],
      webhook: undefined,
    };
  }
  const checks = [
    passed('webhook.registered', `geohook's webhook ${webhook.id} points at ${hookUrl}`),
    webhook.active
      ? passed('webhook.active', 'the webhook is active')
      : failed('webhook.active', `the webhook on ${service} is deactivated`, `geohook admin activate-all ${service}`),
  ];
  const key = keyCheck(service, webhook, expectation.keys, expectation.receiver);
  checks.push(key);
  if (parseServiceName(service).type === 'FeatureServer') checks.push(changeTypesCheck(service, webhook, expectation.changeTypes));
  // Unless the keys could not be read, a key mismatch explains failed deliveries: they were refused (401).
  const keyHeld = key.ok || expectation.keys === undefined;
  if (client.product === 'enterprise') checks.push(await failuresCheck(service, webhook, expectation, keyHeld));
  return { checks, webhook };
}
