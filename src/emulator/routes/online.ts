import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { onlineWebhookSettingBounds, type OnlineWebhookSettings } from '../../arcgis/webhook-settings.js';
import type { OnlineWebhook } from '../../arcgis/webhook.js';
import { AdminError } from '../admin-error.js';
import { ADMIN, authorize, type EmulatorContext } from '../context.js';
import { challengeResponseCheck } from '../crc-check.js';
import { sendAdmin, sendRestError, toRestError } from '../respond.js';
import { checkPrerequisites, webhookFields } from '../validate-webhook.js';

/** Options of {@link onlineRoutes}. */
export interface OnlineRoutesOptions extends EmulatorContext {
  /** Fetch used for the challenge-response check of a hookUrl. @defaultValue global fetch */
  fetch?: typeof fetch;
}

type ServiceParams = { name: string };
type HookParams = ServiceParams & { globalId: string };

const success = { success: true };

/**
 * An ArcGIS Online organization's hosted feature layer webhooks (register with the prefix
 * `/<orgId>/ArcGIS/rest/admin/services`): the `WebHooks` resource of `<name>/FeatureServer` as the ArcGIS
 * API for Python's `WebHookServiceManager` uses it, and the organization's `webhooks/webhookSettings`. Errors
 * come in the REST shape `{"error":{…}}` with HTTP 200.
 */
export async function onlineRoutes(app: FastifyInstance, options: OnlineRoutesOptions): Promise<void> {
  const { store, clock } = options;
  const check = (hookUrl: string, signatureKey: string): Promise<string | undefined> =>
    challengeResponseCheck(hookUrl, signatureKey, options.fetch ?? fetch);

  app.setErrorHandler<FastifyError | AdminError>((err, request, reply) => {
    const error = toRestError(err);
    if (error.code === 500) request.log.error({ err }, 'emulator Online request failed');
    return sendRestError(reply, error);
  });

  const hooksOf = (serviceName: string): OnlineWebhook[] =>
    [...store.onlineWebhooks.values()].filter((hook) => hook.serviceName === serviceName);
  const hookOf = (request: FastifyRequest<{ Params: HookParams }>): OnlineWebhook => {
    const hook = store.onlineWebhooks.get(request.params.globalId);
    if (hook === undefined || hook.serviceName !== request.params.name) {
      throw new AdminError(404, `Webhook '${request.params.globalId}' does not exist on service '${request.params.name}'.`);
    }
    return hook;
  };
  const route = <P extends ServiceParams>(
    method: 'POST' | ['GET', 'POST'],
    tail: string,
    handler: (request: FastifyRequest<{ Params: P }>, reply: FastifyReply) => Promise<unknown>,
  ): void => {
    app.route<{ Params: P }>({ method, url: `/:name/FeatureServer/WebHooks${tail}`, handler });
  };

  route<ServiceParams>(['GET', 'POST'], '', async (request, reply) => {
    authorize(options, request, ADMIN, 'list webhooks');
    store.onlineService(request.params.name);
    return sendAdmin(request, reply, hooksOf(request.params.name));
  });

  route<ServiceParams>('POST', '/create', async (request, reply) => {
    const { user, params } = authorize(options, request, ADMIN, 'create webhook');
    const service = store.onlineService(request.params.name);
    checkPrerequisites(service);
    const now = clock.now();
    const fields = webhookFields(params, service, now);
    const refused = await check(fields.hookUrl, fields.signatureKey);
    if (refused !== undefined) throw new AdminError(400, 'Unable to create the webhook.', refused);
    const hook: OnlineWebhook = {
      globalId: randomUUID(),
      serviceName: service.serviceName,
      ...fields,
      created: now,
      modified: now,
      owner: user.username,
    };
    store.onlineWebhooks.set(hook.globalId, hook);
    return sendAdmin(request, reply, hook);
  });

  const bulk: [string, (hook: OnlineWebhook) => void][] = [
    ['activateAll', (hook) => (hook.active = true)],
    ['deactivateAll', (hook) => (hook.active = false)],
    ['deleteAll', (hook) => store.onlineWebhooks.delete(hook.globalId)],
  ];
  for (const [operation, apply] of bulk) {
    route<ServiceParams>('POST', `/${operation}`, async (request, reply) => {
      authorize(options, request, ADMIN, operation);
      store.onlineService(request.params.name);
      hooksOf(request.params.name).forEach(apply);
      return sendAdmin(request, reply, success);
    });
  }

  route<HookParams>(['GET', 'POST'], '/:globalId', async (request, reply) => {
    authorize(options, request, ADMIN, 'read webhook');
    return sendAdmin(request, reply, hookOf(request));
  });

  route<HookParams>('POST', '/:globalId/edit', async (request, reply) => {
    const { params } = authorize(options, request, ADMIN, 'edit webhook');
    const hook = hookOf(request);
    const fields = webhookFields(params, store.onlineService(request.params.name), clock.now(), hook);
    if (fields.hookUrl !== hook.hookUrl || fields.signatureKey !== hook.signatureKey) {
      const refused = await check(fields.hookUrl, fields.signatureKey);
      if (refused !== undefined) throw new AdminError(400, 'Unable to edit the webhook.', refused);
    }
    Object.assign(hook, fields, { modified: clock.now() });
    return sendAdmin(request, reply, hook);
  });

  // The test ping: one delivery of `events: ["NoContent"]` to the webhook, whether or not it is active.
  route<HookParams>('POST', '/:globalId/status', async (request, reply) => {
    authorize(options, request, ADMIN, 'webhook status');
    const [delivery] = options.engine.fireOnline([hookOf(request)], { kind: 'ping' });
    return sendAdmin(request, reply, { success: true, ...(delivery === undefined ? {} : { deliveryId: delivery.id }) });
  });

  route<HookParams>('POST', '/:globalId/delete', async (request, reply) => {
    authorize(options, request, ADMIN, 'delete webhook');
    store.onlineWebhooks.delete(hookOf(request).globalId);
    return sendAdmin(request, reply, success);
  });
}

/**
 * The organization's webhook settings (register with the prefix `/<orgId>/ArcGIS/rest/admin`):
 * `webhooks/webhookSettings` reads them, with parameters it changes them within Online's bounds. Answered
 * as the product's documentation shows them: an array of one object whose values are strings.
 */
export async function onlineSettingsRoutes(app: FastifyInstance, options: EmulatorContext): Promise<void> {
  app.setErrorHandler<FastifyError | AdminError>((err, _request, reply) => sendRestError(reply, toRestError(err)));
  for (const url of ['/webhooks/webhookSettings', '/webhooks/webhooksettings']) {
    app.route({
      method: ['GET', 'POST'],
      url,
      handler: async (request, reply) => {
        const { params } = authorize(options, request, ADMIN, 'webhook settings');
        const next = { ...options.store.onlineSettings };
        for (const [name, [min, max]] of Object.entries(onlineWebhookSettingBounds) as [
          keyof OnlineWebhookSettings,
          readonly [number, number],
        ][]) {
          next[name] = params.integer(name, min, max) ?? next[name];
        }
        options.store.onlineSettings = next;
        return sendAdmin(request, reply, [Object.fromEntries(Object.entries(next).map(([name, value]) => [name, String(value)]))]);
      },
    });
  }
}
