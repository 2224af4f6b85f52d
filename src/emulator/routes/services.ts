import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError, invalidParameter } from '../admin-error.js';
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

interface DefinitionParams {
  folder?: string;
  name: string;
}

/** `findServices` with every filter, and feature services' `updateDefinition`. */
export async function serviceRoutes(app: FastifyInstance, context: EmulatorContext): Promise<void> {
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

  const updateDefinitionPaths = [
    '/services/:name/FeatureServer/updateDefinition',
    '/services/:folder/:name/FeatureServer/updateDefinition',
  ];
  for (const url of updateDefinitionPaths) app.post<{ Params: DefinitionParams }>(url, updateDefinition);

  async function updateDefinition(request: FastifyRequest<{ Params: DefinitionParams }>, reply: FastifyReply): Promise<FastifyReply> {
    const { params } = authorize(context, request, ADMIN, 'updateDefinition');
    const service = context.store.service(request.params.folder, `${request.params.name}.FeatureServer`);
    const definition = params.json('updateDefinition');
    if (definition === undefined) throw new AdminError(400, "Missing required parameter 'updateDefinition'.");
    if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
      throw invalidParameter(
        'updateDefinition',
        'must be a JSON object such as {"capabilities":"Query,Editing,ChangeTracking","syncEnabled":false}',
      );
    }
    const { capabilities, syncEnabled } = definition as { capabilities?: unknown; syncEnabled?: unknown };
    if (capabilities !== undefined && typeof capabilities !== 'string')
      throw invalidParameter('updateDefinition.capabilities', 'must be a comma-separated string');
    if (syncEnabled !== undefined && typeof syncEnabled !== 'boolean')
      throw invalidParameter('updateDefinition.syncEnabled', 'must be true or false');
    if (capabilities !== undefined) service.capabilities = capabilities;
    if (syncEnabled !== undefined) service.syncEnabled = syncEnabled;
    return sendAdmin(request, reply, { status: 'success' });
  }
}
