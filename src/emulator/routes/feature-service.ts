import type { FastifyInstance } from 'fastify';
import type { ServiceParams } from '../context.js';
import { serviceRoute } from '../context.js';
import type { LayerDefinition } from '../features/types.js';
import { sendAdmin } from '../respond.js';
import type { CatalogService } from '../types.js';
import { capabilitySet } from '../validate-webhook.js';
import { EMULATED_VERSION } from './discovery.js';
import { addressedLayer, addressedService, type FeatureRoutesContext } from './feature-context.js';

/**
 * A feature service's resource (its layers and tables, and with change tracking each layer's server generations
 * and what `extractChanges` supports) and each layer's resource (its definition: fields with domains, object id and
 * GlobalID fields, editor tracking, relationships, geometry type, and how its data is versioned and archived), and
 * all of them at once (`/FeatureServer/layers`, the product's "All Layers and Tables").
 */
export async function featureServiceRoutes(app: FastifyInstance, context: FeatureRoutesContext): Promise<void> {
  const { store, clock } = context;

  serviceRoute<ServiceParams>(
    app,
    ['GET', 'POST'],
    '/FeatureServer',
    async (request, reply) => {
      const { service, features, capabilities } = addressedService(context, request);
      const now = clock.now();
      const entry = (layer: { id: number; definition: { name: string } }) => ({ id: layer.id, name: layer.definition.name });
      return sendAdmin(request, reply, {
        currentVersion: EMULATED_VERSION,
        serviceDescription: '',
        hasVersionedData: service.versioned === true || service.branchVersioned === true,
        supportsDisconnectedEditing: false,
        supportsApplyEditsWithGlobalIds: true,
        syncEnabled: service.syncEnabled === true,
        capabilities: service.capabilities ?? '',
        maxRecordCount: Math.max(...features.layers.map((layer) => layer.definition.maxRecordCount)),
        ...(capabilitySet(service).has('changetracking')
          ? {
              changeTrackingInfo: {
                lastSyncDate: now,
                layerServerGens: features.layers.map((layer) => store.features.layerServerGen(features, layer, now)),
              },
              extractChangesCapabilities: capabilities,
            }
          : {}),
        layers: features.layers.filter((layer) => layer.definition.type !== 'Table').map(entry),
        tables: features.layers.filter((layer) => layer.definition.type === 'Table').map(entry),
      });
    },
    '',
  );

  serviceRoute<ServiceParams>(
    app,
    ['GET', 'POST'],
    '/FeatureServer/layers',
    async (request, reply) => {
      const { service, features } = addressedService(context, request);
      const resources = features.layers.map((layer) => layerResource(service, layer.definition));
      return sendAdmin(request, reply, {
        layers: resources.filter((resource) => resource.type !== 'Table'),
        tables: resources.filter((resource) => resource.type === 'Table'),
      });
    },
    '',
  );

  serviceRoute<ServiceParams & { layer: string }>(
    app,
    ['GET', 'POST'],
    '/FeatureServer/:layer',
    async (request, reply) => {
      const { service, features } = addressedService(context, request);
      return sendAdmin(request, reply, layerResource(service, addressedLayer(features, request.params.layer).definition));
    },
    '',
  );
}

/** The fields of a layer's attachments, as its resource lists them (what `queryAttachments` answers). */
const ATTACHMENT_PROPERTIES = ['name', 'size', 'contentType', 'keywords', 'exifInfo'].map((name) => ({ name, isEnabled: true }));

/** A layer's (or table's) resource: its definition, with what the service says of its capabilities and data. */
function layerResource(service: CatalogService, definition: LayerDefinition): Record<string, unknown> & { type: string } {
  return {
    currentVersion: EMULATED_VERSION,
    ...definition,
    capabilities: service.capabilities ?? '',
    hasAttachments: definition.hasAttachments === true,
    ...(definition.hasAttachments === true ? { attachmentProperties: ATTACHMENT_PROPERTIES } : {}),
    supportsApplyEditsWithGlobalIds: true,
    supportedQueryFormats: 'JSON',
    standardMaxRecordCount: definition.maxRecordCount,
    advancedQueryCapabilities: {
      supportsPagination: true,
      supportsOrderBy: true,
      supportsQueryWithResultType: false,
      supportsReturningQueryExtent: false,
      supportsQueryAttachments: definition.hasAttachments === true,
    },
    isDataVersioned: service.versioned === true || service.branchVersioned === true,
    isDataBranchVersioned: service.branchVersioned === true,
    isDataArchived: service.archiving === true,
  };
}
