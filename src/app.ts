import type { FastifyInstance } from 'fastify';
import { buildReceiver, type ReceiverOptions } from './receiver/build-receiver.js';

/**
 * The receiver as geohook serves it, and as `geohook` exports it (`buildReceiver`): the webhook routes and health of
 * `receiver/`, with the dashboard of `dashboard/` at `/ui` when `config.dashboard` is set. The dashboard is loaded
 * only then: Bull Board's UI stack would otherwise slow every start-up.
 */
export async function buildApp(options: ReceiverOptions): Promise<FastifyInstance> {
  const { config, mount } = options;
  if (config.dashboard === undefined) return buildReceiver(options);
  return buildReceiver({
    ...options,
    mount: async (app, connection) => {
      const { mountDashboard } = await import('./dashboard/mount-dashboard.js');
      await mountDashboard(app, config, connection);
      await mount?.(app, connection);
    },
  });
}
