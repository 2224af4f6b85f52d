import { onlineWebhooksPath, webhookOfOnline } from '../arcgis/online-admin.js';
import type { OnlineWebhook, Webhook } from '../arcgis/webhook.js';
import { unexpected } from '../arcgis-request/check-response.js';
import type { AdminRequest } from './admin-request.js';
import type { AdminClient } from './types.js';
import { checkWebhookParams, invalidArgument } from './validate-input.js';
import { webhookParams } from './webhooks-resource.js';

const read = { idempotent: true };
const write = { idempotent: false };

/** An Online webhook answer as a webhook record; one without a `globalId` is an `AdminApiError`. */
function webhookOf(body: unknown, url: string): Webhook {
  const record = body as Partial<OnlineWebhook> & Record<string, unknown>;
  if (typeof record.globalId !== 'string') throw unexpected(url, 'webhook globalId', record);
  return webhookOfOnline(record as OnlineWebhook);
}

const unavailable = (operation: string) => async (): Promise<never> => {
  throw invalidArgument(`${operation} is not an operation of ArcGIS Online`);
};

/**
 * The webhook operations of an ArcGIS Online hosted feature layer (`services/<name>/FeatureServer/WebHooks`):
 * the same interface as Enterprise's, each record's `globalId` as its `id`. The list comes whole (no paging);
 * `notificationStatus` and the organization-wide list do not exist there.
 */
export function createOnlineWebhooksResource(request: AdminRequest): AdminClient['webhooks'] {
  const hookPath = (service: string, id: string): string => {
    if (typeof id !== 'string' || id.trim() === '') throw invalidArgument('id: must be a non-empty webhook globalId');
    return `${onlineWebhooksPath(service)}/${encodeURIComponent(id)}`;
  };
  const listAll: AdminClient['webhooks']['listAll'] = async (service) => {
    const path = onlineWebhooksPath(service);
    const items = await request.sendForList(path, {}, read);
    return items.map((item) => webhookOf(item, request.urlOf(path)));
  };
  const bulk =
    (operation: 'activateAll' | 'deactivateAll' | 'deleteAll') =>
    async (service: string): Promise<void> => {
      await request.send(`${onlineWebhooksPath(service)}/${operation}`, {}, write);
    };

  return {
    async create(service, params) {
      const path = `${onlineWebhooksPath(service)}/create`;
      checkWebhookParams(params, true);
      return webhookOf(await request.send(path, webhookParams(params), write), request.urlOf(path));
    },
    list: async (service) => ({ webhooks: await listAll(service), nextStart: -1 }),
    listAll,
    async get(service, id) {
      const path = hookPath(service, id);
      return webhookOf(await request.send(path, {}, read), request.urlOf(path));
    },
    async edit(service, id, params) {
      const path = `${hookPath(service, id)}/edit`;
      checkWebhookParams(params, false);
      return webhookOf(await request.send(path, webhookParams(params), write), request.urlOf(path));
    },
    async delete(service, id) {
      await request.send(`${hookPath(service, id)}/delete`, {}, write);
    },
    activateAll: bulk('activateAll'),
    deactivateAll: bulk('deactivateAll'),
    deleteAll: bulk('deleteAll'),
    notificationStatus: unavailable('notificationStatus'),
    async ping(service, id) {
      await request.send(`${hookPath(service, id)}/status`, {}, write);
    },
    listOrganization: unavailable('the organization-wide webhook list'),
  };
}
