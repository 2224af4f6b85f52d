import type { FastifyInstance } from 'fastify';
import { authorize, ORG_ADMIN, type EmulatorContext } from '../context.js';
import { sendAdmin } from '../respond.js';
import type { WebhookSettings } from '../types.js';

/**
 * Bounds of each setting. The spec gives attempts 1–5 and timeout 1–60; the others are ours: an interval of
 * at most an hour, and a deactivation policy of up to 100 failures over up to 30 days.
 */
export const settingBounds: Record<keyof WebhookSettings, readonly [number, number]> = {
  notificationAttempts: [1, 5],
  notificationTimeOutInSeconds: [1, 60],
  notificationElapsedTimeInSeconds: [1, 3600],
  numberOfFailures: [1, 100],
  daysInPast: [1, 30],
};

/** `services/webhooks/settings`: organisation administrators read and change the delivery settings. */
export async function settingsRoutes(app: FastifyInstance, context: EmulatorContext): Promise<void> {
  app.route({
    method: ['GET', 'POST'],
    url: '/services/webhooks/settings',
    handler: async (request, reply) => {
      const { params } = authorize(context, request, ORG_ADMIN, 'webhook settings');
      const next = { ...context.store.settings };
      for (const [name, [min, max]] of Object.entries(settingBounds) as [keyof WebhookSettings, readonly [number, number]][]) {
        next[name] = params.integer(name, min, max) ?? next[name];
      }
      context.store.settings = next;
      return sendAdmin(request, reply, { ...next, status: 'success' });
    },
  });
}
