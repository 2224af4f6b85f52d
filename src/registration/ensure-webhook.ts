import type { Logger } from 'pino';
import type { AdminClient } from '../admin/types.js';
import { parseServiceName } from '../arcgis/service-name.js';
import type { ServiceName } from '../arcgis/service-name.js';
import type { CreateWebhookParams, Webhook } from '../arcgis/webhook.js';
import { GeohookError } from '../errors.js';

/** What geohook wants registered on a service. */
export interface DesiredWebhook {
  /** `$PUBLIC_URL/webhooks/<hook>`: how geohook recognises its own webhook. */
  hookUrl: string;
  /** The signature key the GIS server must sign with. */
  signatureKey: string;
  /** Feature-service triggers (ignored for other service types). */
  changeTypes: readonly string[];
}

/** What {@link ensureWebhook} did. */
export type EnsureAction = 'created' | 'reactivated' | 'updated' | 'unchanged';

/** What {@link ensureWebhook} did to a service's webhook, and why. */
export interface EnsureOutcome {
  id: string;
  action: EnsureAction;
  /** Why it changed the webhook, for the log; undefined when it did not (or created it). */
  reason?: string;
}

/** The name geohook gives the webhooks it creates. */
export const WEBHOOK_NAME = 'geohook';

/**
 * Throws `GEOHOOK_ERR_REGISTRATION` unless findServices knows the service. ArcGIS Online has no findServices:
 * there, the webhook list of a service it does not have answers 404.
 */
async function checkServiceExists(client: AdminClient, service: ServiceName): Promise<void> {
  if (client.product === 'online') return;
  const { folder, name, type } = parseServiceName(service);
  const found = await client.findServices({
    ...(folder === undefined ? {} : { folderName: folder }),
    serviceName: name,
    serviceType: type,
  });
  if (found.length === 0) throw new GeohookError('GEOHOOK_ERR_REGISTRATION', `service ${service} not found on the GIS server`);
}

/**
 * The outcome when a listing of the service's webhooks (the organisation-wide one) shows exactly one with
 * `desired.hookUrl`, active and signed with `desired.signatureKey`: nothing to change, no request to make.
 * Undefined when something is to be done, which {@link ensureWebhook} does.
 */
export function settledWebhook(listed: readonly Webhook[], desired: DesiredWebhook): EnsureOutcome | undefined {
  const ours = listed.filter((webhook) => webhook.hookUrl === desired.hookUrl);
  const [only] = ours;
  if (ours.length !== 1 || only === undefined || !only.active || only.signatureKey !== desired.signatureKey) return undefined;
  return { id: only.id, action: 'unchanged' };
}

/**
 * Makes sure `service` has exactly one webhook with `desired.hookUrl`, active and signed with
 * `desired.signatureKey`: adopts the one that exists (deleting extra copies), reactivates it, sets the key,
 * or creates it. Run it under the registration lock so that replicas do not create one each. `exists`: the
 * catalogue already showed the service, so findServices is not asked again.
 */
export async function ensureWebhook(
  client: AdminClient,
  service: ServiceName,
  desired: DesiredWebhook,
  log: Logger,
  exists = false,
): Promise<EnsureOutcome> {
  if (!exists) await checkServiceExists(client, service);
  const ours = (await client.webhooks.listAll(service)).filter((webhook) => webhook.hookUrl === desired.hookUrl);
  const [kept, ...extra] = ours;
  for (const duplicate of extra) {
    log.warn({ service, webhookId: duplicate.id }, 'deleting a duplicate webhook with our hookUrl');
    await client.webhooks.delete(service, duplicate.id);
  }
  if (kept === undefined) {
    const params: CreateWebhookParams = {
      name: WEBHOOK_NAME,
      hookUrl: desired.hookUrl,
      signatureKey: desired.signatureKey,
      active: true,
      contentType: 'application/json',
      ...(parseServiceName(service).type === 'FeatureServer' ? { changeTypes: [...desired.changeTypes] } : {}),
    };
    const created = await client.webhooks.create(service, params);
    return { id: created.id, action: 'created' };
  }
  let action: EnsureAction = 'unchanged';
  const reasons: string[] = [];
  if (kept.signatureKey !== desired.signatureKey) {
    await client.webhooks.edit(service, kept.id, { signatureKey: desired.signatureKey });
    action = 'updated';
    reasons.push("its signature key was not the receiver's (its deliveries were refused, 401): set to the receiver's");
  }
  if (!kept.active) {
    // activateAll is the product's way back from deactivation: it also clears the failure count.
    await client.webhooks.activateAll(service);
    action = 'reactivated';
    reasons.push('it was deactivated (the server gives up on a webhook after failed deliveries): activated again');
  }
  return { id: kept.id, action, ...(reasons.length === 0 ? {} : { reason: reasons.join('; ') }) };
}
