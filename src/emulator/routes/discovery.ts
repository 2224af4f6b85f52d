import type { FastifyInstance } from 'fastify';
import { ADMIN, authorize, type EmulatorContext } from '../context.js';
import { sendAdmin } from '../respond.js';
import { SHORT_LIVED_TOKEN_MINUTES } from './tokens.js';

/** The server version the emulator answers as: 11.x, the first with service webhooks in the ArcGIS API for Python. */
export const EMULATED_VERSION = 11.3;

/** The child resources of the admin root that the emulator serves. */
const ADMIN_RESOURCES = ['services', 'generateToken'];

/**
 * What clients read before they call the admin API: the admin root (`GET /arcgis/admin`, whose numeric
 * `currentVersion` the ArcGIS API for Python checks before it manages webhooks) and the `info` resources
 * at which clients discover the token service, without a token.
 */
export async function discoveryRoutes(app: FastifyInstance, context: EmulatorContext & { publicUrl: () => string }): Promise<void> {
  app.route({
    method: ['GET', 'POST'],
    url: '/arcgis/admin',
    handler: async (request, reply) => {
      authorize(context, request, ADMIN, 'admin');
      return sendAdmin(request, reply, { currentVersion: EMULATED_VERSION, resources: ADMIN_RESOURCES });
    },
  });
  for (const url of ['/arcgis/info', '/arcgis/rest/info', '/arcgis/sharing/rest/info']) {
    app.route({
      method: ['GET', 'POST'],
      url,
      handler: async (request, reply) =>
        sendAdmin(request, reply, {
          currentVersion: EMULATED_VERSION,
          fullVersion: `${EMULATED_VERSION}.0`,
          authInfo: {
            isTokenBasedSecurity: true,
            tokenServicesUrl: `${context.publicUrl()}/arcgis/sharing/rest/generateToken`,
            shortLivedTokenValidity: SHORT_LIVED_TOKEN_MINUTES,
          },
        }),
    });
  }
}
