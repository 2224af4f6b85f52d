import type { FastifyRequest } from 'fastify';
import type { EmulatorUser } from '../../config/load-config.js';
import { AdminError } from '../admin-error.js';
import { requestToken, type EmulatorContext, type ServiceParams } from '../context.js';
import { capabilitiesOf, type ExtractChangesCapabilities } from '../features/extract-profiles.js';
import type { FeatureLayer } from '../features/feature-layer.js';
import type { ServiceFeatures } from '../features/feature-store.js';
import { Params } from '../params.js';
import { serviceKey } from '../store.js';
import type { CatalogService } from '../types.js';

/** What the feature-service routes work with: the context, where the emulator is reached, which side they serve. */
export interface FeatureRoutesContext extends EmulatorContext {
  publicUrl: () => string;
  /** The ArcGIS Online organization's services: deletes as GlobalIDs, the `online` profile. */
  online: boolean;
}

/** A feature service a request addresses, with its layers and what its `extractChanges` supports. */
export interface AddressedService {
  service: CatalogService;
  key: string;
  features: ServiceFeatures;
  capabilities: ExtractChangesCapabilities;
}

/** The feature service of the request's path (`[<folder>/]<name>/FeatureServer`); 404 when there is none. */
export function addressedService(context: FeatureRoutesContext, request: FastifyRequest<{ Params: ServiceParams }>): AddressedService {
  const { folder, service: name } = request.params;
  if (context.online && folder !== undefined)
    throw new AdminError(404, 'Service not found.', `No service ${folder}/${name}: the organization has no folders.`);
  const service = context.online ? context.store.onlineService(name) : context.store.service(folder, `${name}.FeatureServer`);
  const key = serviceKey(service);
  const profile = context.online ? 'online' : (service.extractChanges ?? 'enterprise-11');
  return { service, key, features: context.store.features.of(key, service), capabilities: capabilitiesOf(profile) };
}

/** The layer `id` (a path segment) of `features`; the product's 400 when there is none. */
export function addressedLayer(features: ServiceFeatures, id: string): FeatureLayer {
  const layer = /^\d{1,9}$/.test(id) ? features.layer(Number(id)) : undefined;
  if (layer === undefined) throw new AdminError(400, 'Invalid URL', `Layer ${id} does not exist.`);
  return layer;
}

/** The user behind the request's token (already checked by the REST routes' hook). */
export const requestUser = (context: EmulatorContext, request: FastifyRequest): EmulatorUser =>
  context.tokens.authenticate(requestToken(request, Params.of(request)));
