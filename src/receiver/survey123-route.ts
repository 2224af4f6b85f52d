import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GeohookError } from '../errors.js';
import { sendError } from './error-reply.js';
import { createPortalChecks, type PortalChecksOptions } from './portal-checks.js';

/** Options of {@link survey123Routes}. */
export interface Survey123RouteOptions {
  /** The hooks webhooks may name. */
  hooks: ReadonlySet<string>;
  /** The portal that checks tokens (configuration only); undefined: every webhook is refused with 503. */
  portalUrl: string | undefined;
  /** How the portal's checks are bounded (tests): its budget per hook, the refused tokens kept, the clock. */
  portalChecks?: Omit<PortalChecksOptions, 'portalUrl' | 'fetch'>;
  /** Closes the submission of the parent `globalId` (or marks it for when its parent is resolved). */
  close(hook: string, globalId: string): Promise<'closed' | 'marked'>;
  maxBodyBytes: number;
  /** @defaultValue globalThis.fetch */
  fetch?: typeof fetch;
}

const GUID = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What geohook reads of a Survey123 webhook payload: the user's token and name, the parent's GlobalID. */
function readPayload(body: unknown): { token: string; username: string | undefined; globalId: string } {
  const payload = isObject(body) ? body : Buffer.isBuffer(body) ? (JSON.parse(body.toString('utf8')) as unknown) : undefined;
  if (!isObject(payload)) throw new GeohookError('GEOHOOK_ERR_BAD_PAYLOAD', 'a Survey123 webhook is a JSON object');
  const token = isObject(payload.portalInfo) ? payload.portalInfo.token : undefined;
  if (typeof token !== 'string' || token === '')
    throw new GeohookError('GEOHOOK_ERR_BAD_PAYLOAD', 'a Survey123 webhook carries the user token in portalInfo.token');
  const feature = isObject(payload.feature) ? payload.feature : {};
  const result = isObject(feature.result) ? feature.result : {};
  const match = GUID.exec(String(result.globalId ?? ''));
  if (match === null) throw new GeohookError('GEOHOOK_ERR_BAD_PAYLOAD', 'a Survey123 webhook names its record in feature.result.globalId');
  const username = isObject(payload.userInfo) && typeof payload.userInfo.username === 'string' ? payload.userInfo.username : undefined;
  return { token, username, globalId: `{${match[1]!.toUpperCase()}}` };
}

/**
 * `POST /webhooks/<hook>/survey123` (docs/submissions.md): a Survey123 webhook carries a user token, not a
 * signature. Nothing in it is believed before the configured portal says whose token it is (and that it is the
 * user the payload names); then the submission of `feature.result.globalId` is closed at once. The payload names
 * no URL geohook calls: the portal is configuration's. The portal's checks are bounded ({@link createPortalChecks}):
 * unauthenticated posts cannot make geohook flood it.
 */
export async function survey123Routes(app: FastifyInstance, options: Survey123RouteOptions): Promise<void> {
  const check =
    options.portalUrl === undefined
      ? undefined
      : createPortalChecks({
          ...options.portalChecks,
          portalUrl: options.portalUrl,
          ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        });
  app.post<{ Params: { hook: string } }>(
    '/webhooks/:hook/survey123',
    { bodyLimit: options.maxBodyBytes },
    async (request: FastifyRequest<{ Params: { hook: string } }>, reply) => {
      try {
        const { hook } = request.params;
        if (!options.hooks.has(hook)) throw new GeohookError('GEOHOOK_ERR_UNKNOWN_HOOK', `no hook named "${hook}"`);
        let read: ReturnType<typeof readPayload>;
        try {
          read = readPayload(request.body);
        } catch (err) {
          throw err instanceof GeohookError ? err : new GeohookError('GEOHOOK_ERR_BAD_PAYLOAD', 'a Survey123 webhook is JSON');
        }
        if (check === undefined)
          throw new GeohookError('GEOHOOK_ERR_PORTAL_UNAVAILABLE', 'no portal to check Survey123 tokens with: set PORTAL_URL');
        const user = await check(hook, read.token);
        if (read.username !== undefined && read.username !== user)
          throw new GeohookError('GEOHOOK_ERR_PORTAL_TOKEN', 'the token is not of the user the payload names');
        const outcome = await options.close(hook, read.globalId);
        request.log.info({ hook, globalId: read.globalId, outcome }, 'Survey123 webhook: submission closed');
        return reply.code(200).send({ globalId: read.globalId, submission: outcome });
      } catch (err) {
        if (!(err instanceof GeohookError)) throw err;
        request.log.info({ hook: request.params.hook, code: err.code }, 'Survey123 webhook refused');
        return sendError(reply, err);
      }
    },
  );
}
