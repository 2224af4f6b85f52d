import type { FastifyInstance } from 'fastify';
import { adminAuthFor } from './arcgis/online-admin.js';
import { SubmissionStore } from './changes/submission-store.js';
import type { GeohookConfig } from './config/load-config.js';
import { REGISTERED_HOOK } from './config/self-registration.js';
import { serviceLocatorOf } from './config/service-locator.js';
import { buildReceiver, type ReceiverOptions } from './receiver/build-receiver.js';
import { survey123Routes } from './receiver/survey123-route.js';
import type { RedisClient } from './redis/connection.js';
import { loadAttachmentLinkKey } from './signature/attachment-linker.js';

/** The services whose change events link their attachments (`attachments: "link"`). */
const linkedServices = (config: GeohookConfig): string[] =>
  Object.entries(config.admin?.changes.byService ?? {})
    .filter(([, settings]) => settings.attachments === 'link')
    .map(([service]) => service);

/** Mounts `GET /attachments/<token>` (docs/changes.md#attachment-links), loaded only when a service links its attachments. */
async function mountAttachmentLinks(app: FastifyInstance, config: GeohookConfig, connection: RedisClient): Promise<void> {
  const services = linkedServices(config);
  if (config.admin === undefined || services.length === 0) return;
  const { attachmentRoutes } = await import('./attachments/attachment-route.js');
  const auth = adminAuthFor(config.admin.url, config.admin.auth);
  await app.register(attachmentRoutes, {
    key: () => loadAttachmentLinkKey(connection, config.prefix),
    adminUrl: config.admin.url,
    services: new Set(services),
    trusted: serviceLocatorOf(config).trusted(REGISTERED_HOOK),
    ...(auth === undefined ? {} : { auth }),
  });
}

/**
 * The receiver as geohook serves it, and as `geohook` exports it (`buildReceiver`): the webhook routes and health of
 * `receiver/`, Survey123's webhooks closing the submissions of `changes/`, with the dashboard of `dashboard/` at
 * `/ui` when `config.dashboard` is set, and the attachment links of `attachments/` when a service of `changes` has
 * `attachments: "link"`. The dashboard is loaded only then: Bull Board's UI stack would otherwise slow every start-up.
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
      await mountAttachmentLinks(app, config, connection);
      await mount?.(app, connection);
    },
  });
}
