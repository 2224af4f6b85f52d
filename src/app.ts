import type { FastifyInstance } from 'fastify';
import { SubmissionStore } from './changes/submission-store.js';
import { buildReceiver, type ReceiverOptions } from './receiver/build-receiver.js';
import { survey123Routes } from './receiver/survey123-route.js';

/**
 * The receiver as geohook serves it, and as `geohook` exports it (`buildReceiver`): the webhook routes and health of
 * `receiver/`, Survey123's webhooks closing the submissions of `changes/`, with the dashboard of `dashboard/` at
 * `/ui` when `config.dashboard` is set. The dashboard is loaded only then: Bull Board's UI stack would otherwise
 * slow every start-up.
 */
export async function buildApp(options: ReceiverOptions): Promise<FastifyInstance> {
  const { config, mount } = options;
  return buildReceiver({
    ...options,
    mount: async (app, connection) => {
      const submissions = new SubmissionStore(connection, config.prefix);
      await app.register(survey123Routes, {
        hooks: new Set(config.hooks.keys()),
        portalUrl: config.admin?.portalUrl,
        close: (hook, globalId) => submissions.closeBySurvey123(hook, globalId),
        maxBodyBytes: config.maxBodyBytes,
      });
      if (config.dashboard !== undefined) {
        const { mountDashboard } = await import('./dashboard/mount-dashboard.js');
        await mountDashboard(app, config, connection);
      }
      await mount?.(app, connection);
    },
  });
}
