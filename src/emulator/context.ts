import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { EmulatorUser, EmulatorRole } from '../config/load-config.js';
import { requireRole, type TokenStore } from './auth.js';
import type { Clock } from './clock.js';
import type { DeliveryEngine } from './delivery/delivery-engine.js';
import { Params } from './params.js';
import type { EmulatorStore } from './store.js';

/** What every emulator route works with. */
export interface EmulatorContext {
  store: EmulatorStore;
  tokens: TokenStore;
  clock: Clock;
  engine: DeliveryEngine;
}

/** Roles of the admin operations: organisation administrators may do everything. */
export const ADMIN: readonly EmulatorRole[] = ['administrator', 'orgadmin'];
export const ORG_ADMIN: readonly EmulatorRole[] = ['orgadmin'];

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The request's token: the `token` parameter (query or form), else a bearer token in `X-Esri-Authorization` or
 * `Authorization`, the headers the ArcGIS API for Python and arcgis-rest-js send.
 */
export function requestToken(request: FastifyRequest, params: Params): string | undefined {
  const token = params.string('token');
  if (token !== undefined && token !== '') return token;
  for (const header of ['x-esri-authorization', 'authorization']) {
    const value = request.headers[header];
    const bearer = typeof value === 'string' ? BEARER.exec(value)?.[1] : undefined;
    if (bearer !== undefined) return bearer;
  }
  return undefined;
}

/** Authenticates the request's token and checks the role; returns the user and the parameters. */
export function authorize(
  context: EmulatorContext,
  request: FastifyRequest,
  roles: readonly EmulatorRole[],
  operation: string,
): { user: EmulatorUser; params: Params } {
  const params = Params.of(request);
  const user = context.tokens.authenticate(requestToken(request, params));
  requireRole(user, roles, operation);
  return { user, params };
}

/** Route parameters of a service-addressed path: `services/<name>.<type>` or `services/<folder>/<name>.<type>`. */
export interface ServiceParams {
  folder?: string;
  service: string;
}

/**
 * Registers `handler` at both spellings of a service-addressed path, `<prefix>/:service<tail>` and
 * `<prefix>/:folder/:service<tail>`.
 */
export function serviceRoute<P extends ServiceParams>(
  app: FastifyInstance,
  method: HTTPMethods | HTTPMethods[],
  tail: string,
  handler: (request: FastifyRequest<{ Params: P }>, reply: FastifyReply) => Promise<unknown>,
  prefix = '/services',
  options: { bodyLimit?: number } = {},
): void {
  for (const url of [`${prefix}/:service${tail}`, `${prefix}/:folder/:service${tail}`]) {
    app.route<{ Params: P }>({ method, url, handler, ...options });
  }
}
