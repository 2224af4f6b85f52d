import type { FastifyInstance } from 'fastify';
import { webhookSettingBounds, type WebhookSettings } from '../../arcgis/webhook-settings.js';
import { authorize, ORG_ADMIN, type EmulatorContext } from '../context.js';
import { sendAdmin } from '../respond.js';

/** `services/webhooks/settings`: organisation administrators read and change the delivery settings. */
export async function settingsRoutes(app: FastifyInstance, context: EmulatorContext): Promise<void> {
  app.route({
    method: ['GET', 'POST'],
    url: '/services/webhooks/settings',
    handler: async (request, reply) => {
      const { params } = authorize(context, request, ORG_ADMIN, 'webhook settings');
      const next = { ...context.store.settings };
      for (const [name, [min, max]] of Object.entries(webhookSettingBounds) as [keyof WebhookSettings, readonly [number, number]][]) {
        next[name] = params.integer(name, min, max) ?? next[name];
      }
      context.store.settings = next;
      return sendAdmin(request, reply, { ...next, status: 'success' });
    },
  });
}
