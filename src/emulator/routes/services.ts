import type { FastifyInstance } from 'fastify';
import { ADMIN, authorize, type EmulatorContext } from '../context.js';
import { sendAdmin } from '../respond.js';
import { serviceKey } from '../store.js';
import type { CatalogService } from '../types.js';

/** A service as findServices lists it. */
export function serviceRecord(service: CatalogService): Record<string, unknown> {
  return {
    id: Buffer.from(serviceKey(service)).toString('hex').slice(0, 32),
    serviceName: service.serviceName,
    type: service.type,
    folderName: service.folderName,
    description: '',
    capabilities: service.capabilities ?? (service.type === 'GPServer' ? '' : 'Map,Query,Data'),
    provider: service.type === 'GPServer' ? 'ArcObjects11' : 'SDS',
    clusterName: 'default',
    minInstancesPerNode: 1,
    maxInstancesPerNode: 2,
    instancesPerContainer: 1,
    maxWaitTime: 60,
    maxStartupTime: 300,
    maxIdleTime: 1800,
    maxUsageTime: 600,
    loadBalancing: 'ROUND_ROBIN',
    isolationLevel: 'HIGH',
    configuredState: 'STARTED',
    recycleInterval: 24,
    recycleStartTime: '00:00',
    keepAliveInterval: 1800,
    private: false,
    isDefault: false,
    maxUploadFileSize: 0,
    allowedUploadFileTypes: '',
    properties: service.type === 'GPServer' ? { executionType: service.asynchronous ? 'Asynchronous' : 'Synchronous' } : {},
    jsonProperties: service.type === 'FeatureServer' ? { syncEnabled: service.syncEnabled ?? false } : {},
    portalProperties: { isHosted: service.hosted ?? false },
    extensions: [],
    frameworkProperties: {},
    datasets: [],
    serverId: 'emulator',
  };
}

/** `findServices` with every filter, and the service directory: the root, a folder, a service. */
export async function serviceRoutes(app: FastifyInstance, context: EmulatorContext): Promise<void> {
  const { store } = context;
  const folderNames = (): string[] => [...new Set(store.services.map((service) => service.folderName))].filter((name) => name !== '/');
  const listing = (folderName: string): Record<string, unknown> => ({
    folderName,
    ...(folderName === '/' ? { folders: folderNames() } : {}),
    services: store.services
      .filter((service) => service.folderName === folderName)
      .map(({ serviceName, type }) => ({ folderName, serviceName, type, description: '' })),
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/services',
    handler: async (request, reply) => {
      authorize(context, request, ADMIN, 'list services');
      return sendAdmin(request, reply, listing('/'));
    },
  });
  // One route for `services/<folder>` and `services/<name>.<type>` (a service at the root): they share the path's shape.
  app.route<{ Params: { name: string } }>({
    method: ['GET', 'POST'],
    url: '/services/:name',
    handler: async (request, reply) => {
      authorize(context, request, ADMIN, 'list services');
      const { name } = request.params;
      return sendAdmin(request, reply, folderNames().includes(name) ? listing(name) : serviceRecord(store.service('/', name)));
    },
  });
  app.route<{ Params: { folder: string; service: string } }>({
    method: ['GET', 'POST'],
    url: '/services/:folder/:service',
    handler: async (request, reply) => {
      authorize(context, request, ADMIN, 'read service');
      return sendAdmin(request, reply, serviceRecord(store.service(request.params.folder, request.params.service)));
    },
  });

  app.route({
    method: ['GET', 'POST'],
    url: '/services/findServices',
    handler: async (request, reply) => {
      const { params } = authorize(context, request, ADMIN, 'findServices');
      const filters: [string, (service: CatalogService, value: string) => boolean][] = [
        ['filterFolderName', (s, v) => s.folderName.toLowerCase() === v.toLowerCase()],
        ['filterServiceName', (s, v) => s.serviceName.toLowerCase() === v.toLowerCase()],
        ['filterServiceType', (s, v) => s.type.toLowerCase() === v.toLowerCase()],
        [
          'filterServiceId',
          (s, v) =>
            v
              .split(',')
              .map((id) => id.trim())
              .includes(serviceRecord(s).id as string),
        ],
        ['filterServiceProvider', (s, v) => (serviceRecord(s).provider as string).toLowerCase() === v.toLowerCase()],
      ];
      const matching = context.store.services.filter((service) =>
        filters.every(([name, matches]) => !params.has(name) || matches(service, params.string(name)!.trim())),
      );
      return sendAdmin(request, reply, { filteredServices: matching.map(serviceRecord) });
    },
  });
}
