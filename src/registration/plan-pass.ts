import type { Logger } from 'pino';
import { adminUnavailable } from '../admin/admin-unavailable.js';
import { resolveServices, type ResolvedServices } from '../admin/resolve-services.js';
import type { AdminClient } from '../admin/types.js';
import { formatServiceName, type ServiceName } from '../arcgis/service-name.js';
import type { Webhook } from '../arcgis/webhook.js';

/** What a registration pass works on, read with two admin requests at most whatever the number of services. */
export interface PassPlan extends ResolvedServices {
  /** Whether findServices listed the services (ArcGIS Enterprise): they need not be looked up one by one. */
  catalogued: boolean;
  /**
   * Every service's webhooks, from the organisation-wide list (ArcGIS Enterprise 11.2): a service it shows settled
   * costs no request. Undefined where there is no such list (ArcGIS Online, older servers): each service's own.
   */
  webhooks: Map<ServiceName, Webhook[]> | undefined;
}

/** The organisation's webhooks by service; undefined when the server has no organisation-wide list. */
async function organisationWebhooks(client: AdminClient, adminUrl: string, log: Logger): Promise<Map<ServiceName, Webhook[]> | undefined> {
  if (client.product === 'online') return undefined;
  let listed: Webhook[];
  try {
    listed = await client.webhooks.listOrganization();
  } catch (err) {
    if (adminUnavailable(err, adminUrl) !== undefined) throw err;
    log.debug({ err }, 'no organisation-wide webhook list: each service is listed on its own');
    return undefined;
  }
  const byService = new Map<ServiceName, Webhook[]>();
  for (const webhook of listed) {
    const service = formatServiceName(webhook.folderName === '/' ? '' : webhook.folderName, webhook.serviceName, webhook.serviceType);
    if (service === undefined) continue;
    byService.set(service, [...(byService.get(service) ?? []), webhook]);
  }
  return byService;
}

/**
 * The services REGISTER names (patterns resolved against the catalogue of findServices on ArcGIS Enterprise) and,
 * where the server lists them organisation-wide, their webhooks. On ArcGIS Online, which has neither, the named
 * services as they are (configuration refuses patterns there).
 */
export async function planPass(client: AdminClient, entries: readonly string[], adminUrl: string, log: Logger): Promise<PassPlan> {
  if (client.product === 'online') return { services: [...entries], missing: [], unmatched: [], catalogued: false, webhooks: undefined };
  const catalogue = await client.findServices();
  const webhooks = await organisationWebhooks(client, adminUrl, log);
  return { ...resolveServices(entries, catalogue), catalogued: true, webhooks };
}
