import { parseServiceName, webhookPath } from '../arcgis/service-name.js';
import type { ServiceName } from '../arcgis/service-name.js';
import type { CreateWebhookParams, Webhook } from '../arcgis/webhook.js';
import { unexpected } from '../arcgis-request/check-response.js';
import type { AdminRequest } from './admin-request.js';
import { arrayField, webhookOf } from './read-answer.js';
import type { AdminClient } from './types.js';
import { checkWebhookParams, invalidArgument } from './validate-input.js';

/** Page size `listAll` asks for (the ArcGIS API for Python's). */
export const LIST_PAGE_SIZE = 25;

const read = { idempotent: true };
const write = { idempotent: false };

/** The create/edit parameters as the admin API takes them (unset ones are not sent). */
export function webhookParams(params: Partial<CreateWebhookParams>): Record<string, string | boolean | object | undefined> {
  const { name, hookUrl, changeTypes, signatureKey, active, contentType, payloadFormat, scheduleInfo } = params;
  return { name, hookUrl, changeTypes, signatureKey, active, contentType, payloadFormat, scheduleInfo };
}

/** The webhook operations of a service, and the organisation-wide list. */
export function createWebhooksResource(request: AdminRequest): AdminClient['webhooks'] {
  const hooksPath = (service: ServiceName): string => `${parseServiceName(service).path}/webhooks`;

  const bulk =
    (operation: 'activateAll' | 'deactivateAll' | 'deleteAll') =>
    async (service: ServiceName): Promise<void> => {
      await request.send(`${hooksPath(service)}/${operation}`, {}, write);
    };

  const list: AdminClient['webhooks']['list'] = async (service, page = {}) => {
    const path = hooksPath(service);
    const body = await request.send(path, { start: page.start, num: page.num }, read);
    const nextStart = typeof body.nextStart === 'number' ? body.nextStart : -1;
    return { webhooks: arrayField<Webhook>(body, 'webhooks', request.urlOf(path)), nextStart };
  };

  return {
    async create(service, params) {
      const path = `${hooksPath(service)}/create`;
      checkWebhookParams(params, true);
      return webhookOf<Webhook>(await request.send(path, webhookParams(params), write), request.urlOf(path));
    },
    list,
    async listAll(service) {
      const all: Webhook[] = [];
      for (let start = 1; start !== -1;) {
        const page = await list(service, { start, num: LIST_PAGE_SIZE });
        all.push(...page.webhooks);
        // A server that does not move forward would make this loop for ever.
        if (page.nextStart !== -1 && page.nextStart <= start) {
          throw unexpected(request.urlOf(hooksPath(service)), `nextStart after ${start} (got ${page.nextStart})`, {
            nextStart: page.nextStart,
          });
        }
        start = page.nextStart;
      }
      return all;
    },
    async get(service, id) {
      const path = webhookPath(service, id);
      return webhookOf<Webhook>(await request.send(path, {}, read), request.urlOf(path));
    },
    async edit(service, id, params) {
      const path = `${webhookPath(service, id)}/edit`;
      checkWebhookParams(params, false);
      return webhookOf<Webhook>(await request.send(path, webhookParams(params), write), request.urlOf(path));
    },
    async delete(service, id) {
      await request.send(`${webhookPath(service, id)}/delete`, {}, write);
    },
    activateAll: bulk('activateAll'),
    deactivateAll: bulk('deactivateAll'),
    deleteAll: bulk('deleteAll'),
    async notificationStatus(service, id) {
      const path = `${webhookPath(service, id)}/notificationStatus`;
      return arrayField(await request.send(path, {}, read), 'webhookNotificationStatus', request.urlOf(path));
    },
    async listOrganization() {
      const path = 'services/webhooks';
      return arrayField<Webhook>(await request.send(path, {}, read), 'webhooks', request.urlOf(path));
    },
    async ping() {
      throw invalidArgument('ping (a test delivery) is an operation of ArcGIS Online only');
    },
  };
}
