import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Webhook } from '../../arcgis/webhook.js';
import { ADMIN, authorize, serviceRoute, type EmulatorContext, type ServiceParams } from '../context.js';
import { sendAdmin } from '../respond.js';
import { checkPrerequisites, webhookFields } from '../validate-webhook.js';

type WithId = ServiceParams & { id: string };

/** The webhook operations of a service, plus the organisation-wide list. */
export async function adminWebhookRoutes(app: FastifyInstance, context: EmulatorContext): Promise<void> {
  const { store, clock, engine } = context;
  const success = { status: 'success' };

  serviceRoute<ServiceParams>(app, 'POST', '/webhooks/create', async (request, reply) => {
    const { user, params } = authorize(context, request, ADMIN, 'create webhook');
    const service = store.service(request.params.folder, request.params.service);
    checkPrerequisites(service);
    const now = clock.now();
    const webhook: Webhook = {
      id: randomUUID(),
      folderName: service.folderName,
      serviceName: service.serviceName,
      serviceType: service.type,
      ...webhookFields(params, service, now),
      created: now,
      modified: now,
      ownerId: user.username,
      modifiedId: user.username,
    };
    store.webhooks.set(webhook.id, webhook);
    return sendAdmin(request, reply, { ...webhook, status: 'success' });
  });

  serviceRoute<ServiceParams>(app, ['GET', 'POST'], '/webhooks', async (request, reply) => {
    const { params } = authorize(context, request, ADMIN, 'list webhooks');
    const all = store.webhooksOf(store.service(request.params.folder, request.params.service));
    const start = params.integer('start', 1, Number.MAX_SAFE_INTEGER) ?? 1;
    const num = params.integer('num', 1, 100) ?? 25;
    const nextStart = start - 1 + num < all.length ? start + num : -1;
    return sendAdmin(request, reply, { webhooks: all.slice(start - 1, start - 1 + num), nextStart });
  });

  const bulk: [string, (hook: Webhook) => void][] = [
    [
      'activateAll',
      (hook) => {
        hook.active = true;
        engine.resetFailures(hook.id);
      },
    ],
    [
      'deactivateAll',
      (hook) => {
        hook.active = false;
      },
    ],
    [
      'deleteAll',
      (hook) => {
        store.webhooks.delete(hook.id);
        engine.resetFailures(hook.id);
      },
    ],
  ];
  for (const [operation, apply] of bulk) {
    serviceRoute<ServiceParams>(app, 'POST', `/webhooks/${operation}`, async (request, reply) => {
      authorize(context, request, ADMIN, operation);
      store.webhooksOf(store.service(request.params.folder, request.params.service)).forEach(apply);
      return sendAdmin(request, reply, success);
    });
  }

  const hookOf = (request: { params: WithId }): Webhook =>
    store.webhook(store.service(request.params.folder, request.params.service), request.params.id);

  serviceRoute<WithId>(app, ['GET', 'POST'], '/webhooks/:id', async (request, reply) => {
    authorize(context, request, ADMIN, 'get webhook');
    return sendAdmin(request, reply, hookOf(request));
  });

  serviceRoute<WithId>(app, 'POST', '/webhooks/:id/edit', async (request, reply) => {
    const { user, params } = authorize(context, request, ADMIN, 'edit webhook');
    const current = hookOf(request);
    const service = store.service(request.params.folder, request.params.service);
    Object.assign(current, webhookFields(params, service, clock.now(), current), { modified: clock.now(), modifiedId: user.username });
    return sendAdmin(request, reply, { ...current, status: 'success' });
  });

  serviceRoute<WithId>(app, 'POST', '/webhooks/:id/delete', async (request, reply) => {
    authorize(context, request, ADMIN, 'delete webhook');
    const { id } = hookOf(request);
    store.webhooks.delete(id);
    engine.resetFailures(id);
    return sendAdmin(request, reply, success);
  });

  serviceRoute<WithId>(app, ['GET', 'POST'], '/webhooks/:id/notificationStatus', async (request, reply) => {
    authorize(context, request, ADMIN, 'notificationStatus');
    // The product lists the deliveries that failed (docs/emulator.md#admin-api).
    const failed = engine.notificationStatus(hookOf(request).id).filter((status) => !status.invoked);
    return sendAdmin(request, reply, { webhookNotificationStatus: failed });
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/services/webhooks',
    handler: async (request, reply) => {
      authorize(context, request, ADMIN, 'list webhooks');
      return sendAdmin(request, reply, { webhooks: [...store.webhooks.values()] });
    },
  });
}
