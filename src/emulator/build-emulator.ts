import formBody from '@fastify/formbody';
import type { FastifyBaseLogger, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fastify } from '../commonjs/fastify.js';
import type { EmulatorUser } from '../config/load-config.js';
import { createLoggerOptions, requestLogController } from '../logger.js';
import { AdminError } from './admin-error.js';
import { defaultUsers, TokenStore } from './auth.js';
import { defaultCatalog } from './catalog.js';
import { EmulatorClock } from './clock.js';
import type { EmulatorContext } from './context.js';
import { DeliveryEngine } from './delivery/delivery-engine.js';
import { createHostCheck, isLoopbackHost } from './host-check.js';
import { sendAdmin } from './respond.js';
import { controlRoutes } from './routes/control.js';
import { discoveryRoutes } from './routes/discovery.js';
import { storageRoutes } from './routes/extract-changes.js';
import { layerDefinitionRoutes } from './routes/layer-definition.js';
import { onlineRoutes, onlineSettingsRoutes } from './routes/online.js';
import { placementRoutes } from './routes/placement.js';
import { restRoutes } from './routes/rest.js';
import { serviceRoutes } from './routes/services.js';
import { settingsRoutes } from './routes/settings.js';
import { tokenRoutes } from './routes/tokens.js';
import { updateDefinitionRoutes } from './routes/update-definition.js';
import { adminWebhookRoutes } from './routes/webhooks.js';
import { EmulatorStore } from './store.js';
import type { CatalogService } from './types.js';

/** The ArcGIS Online organization id the emulator serves when given none. */
export const DEFAULT_ORG_ID = 'geohookOrg';

/** Options of {@link buildEmulator}. */
export interface EmulatorOptions {
  /** Services it serves. @defaultValue the catalogue of docs/emulator.md */
  catalog?: readonly CatalogService[];
  /** Users and roles. @defaultValue admin, orgadmin and viewer (docs/emulator.md) */
  users?: readonly EmulatorUser[];
  /** The emulator's clock (deactivation days, token expiry). @defaultValue real time */
  clock?: EmulatorClock;
  /**
   * Base URL the emulator is reached at, for `statusURL` and `changesUrl` in payloads and the URLs the REST
   * resources answer with.
   * @defaultValue `http://<address>:<port>` it listens on (a wildcard address as 127.0.0.1); 'http://127.0.0.1:7080' before it listens
   */
  publicUrl?: string;
  /**
   * Host names (or addresses) requests may name in their `Host` header besides the loopback names
   * (`127.0.0.1`, `localhost`, `[::1]`), the host of `publicUrl` and the address a connection arrived at:
   * any other is refused with a 403, a defence against DNS rebinding.
   * @defaultValue none
   */
  allowedHosts?: readonly string[];
  /** The id of the ArcGIS Online organization it also serves, at `/<orgId>/ArcGIS/rest/...`. @defaultValue 'geohookOrg' */
  orgId?: string;
  /** Turns the settings' seconds into milliseconds; tests shrink time with it. @defaultValue `s => s * 1000` */
  secondsToMs?: (seconds: number) => number;
  /** pino options' level for the emulator's own logs. @defaultValue 'info' */
  logLevel?: string;
  /** A logger to use instead. */
  loggerInstance?: FastifyBaseLogger;
  /** The lifetime of every token issued, in seconds, whatever `generateToken` asks (EMULATOR_TOKEN_SECONDS). @defaultValue as asked */
  tokenSeconds?: number;
  /** The level of the per-request log lines ("incoming request", "request completed"). @defaultValue 'info' */
  requestLogLevel?: 'info' | 'debug';
}

/** Any error of an admin route as the admin API's error body (HTTP 200, never a stack). */
function toAdminError(err: FastifyError | AdminError): AdminError {
  if (err instanceof AdminError) return err;
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AdminError(400, 'The request body is too large.');
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new AdminError(400, 'Unsupported content type: send application/x-www-form-urlencoded.');
  if (err.statusCode !== undefined && err.statusCode < 500) return new AdminError(400, `Invalid request: ${err.message}`);
  return new AdminError(500, 'Internal error.');
}

/** Answers `error`: in the admin shape with HTTP 200, or, at the control endpoints, with its code as the HTTP status. */
function sendError(request: FastifyRequest, reply: FastifyReply, error: AdminError): FastifyReply {
  if (request.url.startsWith('/emulator/')) return reply.code(error.code >= 498 ? 401 : error.code).send(error.toJSON());
  return sendAdmin(request, reply, error.toJSON());
}

/** `http://<address>:<port>` of a listening server; undefined before it listens. */
function listeningUrl(app: FastifyInstance): string | undefined {
  const address = app.server.address();
  if (address === null || typeof address === 'string') return undefined;
  const host = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** The host name of `url`, as a list of none or one. */
function hostOf(url: string | undefined): string[] {
  try {
    return url === undefined ? [] : [new URL(url).hostname];
  } catch {
    return [];
  }
}

/**
 * Refuses requests whose `Host` header names a host the emulator does not serve (see {@link createHostCheck}),
 * in the admin API's error shape with HTTP 403, and warns once it listens beyond the loopback interface.
 */
function guardHosts(app: FastifyInstance, allowedHosts: readonly string[]): void {
  const allowed = createHostCheck(allowedHosts);
  app.addHook('onRequest', async (request, reply) => {
    const host = request.headers.host;
    if (allowed(host, request.socket.localAddress)) return;
    request.log.warn({ host }, 'emulator refused a request for a host it does not serve');
    const error = new AdminError(
      403,
      `Host '${String(host ?? '').slice(0, 200)}' is not served here: the emulator answers to 127.0.0.1, localhost, [::1] and the names it is given (--allowed-host), a defence against DNS rebinding.`,
    );
    return reply.code(403).type('application/json; charset=utf-8').send(JSON.stringify(error.toJSON()));
  });
  app.addHook('onListen', async () => {
    const address = app.server.address();
    if (address === null || typeof address === 'string' || isLoopbackHost(address.address)) return;
    app.log.warn(
      { address: address.address, port: address.port },
      'the emulator listens beyond the loopback interface: whoever reaches it may use its control endpoints, which take no credentials',
    );
  });
}

/**
 * Builds the admin-API emulator (docs/emulator.md) as a Fastify instance, without listening: the admin API under
 * `/arcgis/admin`, tokens at `/arcgis/sharing/rest/generateToken`, the REST resources payloads point to under
 * `/arcgis/rest/services`, and the control endpoints under `/emulator`.
 */
export async function buildEmulator(options: EmulatorOptions = {}): Promise<FastifyInstance> {
  const app = fastify({
    ...(options.loggerInstance === undefined
      ? { logger: createLoggerOptions({ level: options.logLevel ?? 'info' }) }
      : { loggerInstance: options.loggerInstance }),
    logController: requestLogController(options.requestLogLevel ?? 'info'),
    bodyLimit: 1_048_576,
    // A malformed percent-escape or an over-long segment in the path: answered like any other bad request,
    // not with Fastify's own HTTP 400 and 414 bodies.
    frameworkErrors: (err, request, reply) => sendError(request, reply, new AdminError(400, `Invalid request: ${err.message}.`)),
  });
  const clock = options.clock ?? new EmulatorClock();
  let listenedUrl: string | undefined;
  const publicUrl = (): string => (options.publicUrl ?? (listenedUrl ??= listeningUrl(app)) ?? 'http://127.0.0.1:7080').replace(/\/+$/, '');
  const store = new EmulatorStore(options.catalog ?? defaultCatalog);
  const orgId = options.orgId ?? DEFAULT_ORG_ID;
  const engine = new DeliveryEngine({
    clock,
    getSettings: () => store.settings,
    onDeactivate: (webhookId) => {
      const hook = store.webhooks.get(webhookId) ?? store.onlineWebhooks.get(webhookId);
      if (hook !== undefined) hook.active = false;
    },
    // A getter: the engine reads it at each event, by when the emulator listens and knows its port (read once).
    get restBaseUrl() {
      return `${publicUrl()}/arcgis/rest/services`;
    },
    online: {
      getSettings: () => store.onlineSettings,
      get restBaseUrl() {
        return `${publicUrl()}/${orgId}/ArcGIS/rest/services`;
      },
      orgId,
    },
    logger: app.log,
    ...(options.secondsToMs === undefined ? {} : { secondsToMs: options.secondsToMs }),
  });
  const context: EmulatorContext = {
    store,
    tokens: new TokenStore(options.users ?? defaultUsers, clock, options.tokenSeconds),
    clock,
    engine,
  };

  guardHosts(app, [...(options.allowedHosts ?? []), ...hostOf(options.publicUrl)]);
  app.setErrorHandler<FastifyError | AdminError>((err, request, reply) => {
    const error = toAdminError(err);
    if (error.code === 500) request.log.error({ err }, 'emulator request failed');
    return sendError(request, reply, error);
  });
  app.setNotFoundHandler((request, reply) => {
    const error = new AdminError(404, `No resource or operation at ${request.method} ${request.url.split('?')[0]}.`);
    return request.url.startsWith('/arcgis/') ? sendAdmin(request, reply, error.toJSON()) : reply.code(404).send(error.toJSON());
  });

  await app.register(formBody);
  await app.register(tokenRoutes, context);
  await app.register(discoveryRoutes, { ...context, publicUrl });
  await app.register(
    async (admin) => {
      await admin.register(adminWebhookRoutes, context);
      await admin.register(settingsRoutes, context);
      await admin.register(serviceRoutes, context);
      await admin.register(placementRoutes, context);
      await admin.register(updateDefinitionRoutes, { ...context, answer: { status: 'success' } });
      await admin.register(layerDefinitionRoutes, { ...context, answer: { status: 'success' } });
    },
    { prefix: '/arcgis/admin' },
  );
  await app.register(updateDefinitionRoutes, { ...context, answer: { success: true }, prefix: '/arcgis/rest/admin' });
  await app.register(layerDefinitionRoutes, { ...context, answer: { success: true }, prefix: '/arcgis/rest/admin' });
  const online = `/${orgId}/ArcGIS/rest/admin`;
  await app.register(updateDefinitionRoutes, { ...context, answer: { success: true }, prefix: online });
  await app.register(layerDefinitionRoutes, { ...context, answer: { success: true }, prefix: online });
  await app.register(onlineRoutes, { ...context, prefix: `${online}/services` });
  await app.register(onlineSettingsRoutes, { ...context, prefix: online });
  await app.register(restRoutes, { ...context, publicUrl, prefix: '/arcgis/rest/services' });
  // The organization's hosted services are the catalogue's: their extractChanges reports the same edits.
  await app.register(restRoutes, { ...context, publicUrl, online: true, prefix: `/${orgId}/ArcGIS/rest/services` });
  await app.register(controlRoutes, { ...context, clock, publicUrl });
  await app.register(storageRoutes, context);
  app.addHook('onClose', async () => engine.close());
  return app;
}
