import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError } from '../admin-error.js';
import type { EmulatorContext } from '../context.js';
import { Params } from '../params.js';
import { sendAdmin } from '../respond.js';

/** Longest token lifetime, in minutes (the product's 15 days). */
const MAX_EXPIRATION_MINUTES = 21_600;

/** Token lifetime when `generateToken` is given no `expiration`, in minutes (`shortLivedTokenValidity` of the info resources). */
export const SHORT_LIVED_TOKEN_MINUTES = 60;

function generate(context: EmulatorContext, request: FastifyRequest): { token: string; expires: number; ssl: false } {
  const params = Params.of(request);
  const expiration = params.integer('expiration', 1, MAX_EXPIRATION_MINUTES) ?? SHORT_LIVED_TOKEN_MINUTES;
  const issued = context.tokens.generate(params.string('username') ?? '', params.string('password') ?? '', expiration);
  if (issued === undefined) throw new AdminError(400, 'Unable to generate token.', 'Invalid username or password.');
  return { ...issued, ssl: false };
}

/**
 * `generateToken`, at the portal's `sharing/rest` and ArcGIS Online's `/sharing/rest` (errors in the portal's
 * `{"error":{…}}` shape, as the real product answers there) and under the admin root (errors in the admin shape).
 */
export async function tokenRoutes(app: FastifyInstance, context: EmulatorContext): Promise<void> {
  // The Enterprise portal's, and ArcGIS Online's at the root (www.arcgis.com/sharing/rest/generateToken).
  for (const url of ['/arcgis/sharing/rest/generateToken', '/sharing/rest/generateToken']) {
    app.route({
      method: ['GET', 'POST'],
      url,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        try {
          return sendAdmin(request, reply, generate(context, request));
        } catch (err) {
          if (!(err instanceof AdminError)) throw err;
          const [message, ...details] = err.messages;
          return sendAdmin(request, reply, { error: { code: err.code, message, details } });
        }
      },
    });
  }
  // The signed-in user of a token, as the portal answers it (HTTP 200, an invalid or expired token as `error` 498):
  // what a Survey123 webhook's receiver asks to believe the token.
  for (const url of ['/arcgis/sharing/rest/community/self', '/sharing/rest/community/self']) {
    app.route({
      method: ['GET', 'POST'],
      url,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        try {
          const user = context.tokens.authenticate(Params.of(request).string('token'));
          return sendAdmin(request, reply, {
            username: user.username,
            fullName: user.username,
            role: user.role === 'none' ? 'org_user' : 'org_admin',
          });
        } catch (err) {
          if (!(err instanceof AdminError)) throw err;
          const [message, ...details] = err.messages;
          return sendAdmin(request, reply, { error: { code: err.code, message, details } });
        }
      },
    });
  }
  app.route({
    method: ['GET', 'POST'],
    url: '/arcgis/admin/generateToken',
    handler: async (request, reply) => sendAdmin(request, reply, generate(context, request)),
  });
}
