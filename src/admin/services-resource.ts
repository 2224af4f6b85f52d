import { updateDefinitionPath } from '../arcgis/service-name.js';
import type { AdminRequest } from './admin-request.js';
import { arrayField } from './read-answer.js';
import type { AdminClient, FindServicesFilters, ServiceRecord } from './types.js';
import { invalidArgument } from './validate-input.js';

/** The `filter…` parameter of each `findServices` filter. */
export const findServicesParams: Readonly<Record<keyof FindServicesFilters, string>> = {
  folderName: 'filterFolderName',
  serviceName: 'filterServiceName',
  serviceType: 'filterServiceType',
  serviceId: 'filterServiceId',
  provider: 'filterServiceProvider',
};

/** `findServices` and a feature service's `updateDefinition`. */
export function createServicesResource(request: AdminRequest): Pick<AdminClient, 'findServices' | 'updateDefinition'> {
  return {
    async findServices(filters = {}) {
      const params: Record<string, string> = {};
      for (const [filter, value] of Object.entries(filters) as [string, unknown][]) {
        const name = findServicesParams[filter as keyof FindServicesFilters] as string | undefined;
        if (name === undefined)
          throw invalidArgument(`filters.${filter}: unknown filter, must be one of ${Object.keys(findServicesParams).join(', ')}`);
        if (value === undefined) continue;
        if (typeof value !== 'string') throw invalidArgument(`filters.${filter}: must be a string`);
        params[name] = value;
      }
      const path = 'services/findServices';
      return arrayField<ServiceRecord>(await request.send(path, params, { idempotent: true }), 'filteredServices', request.urlOf(path));
    },
    async updateDefinition(service, definition) {
      const path = updateDefinitionPath(service);
      if (typeof definition !== 'object' || definition === null || Array.isArray(definition)) {
        throw invalidArgument('definition: must be an object such as {"capabilities":"Query,Editing,ChangeTracking","syncEnabled":false}');
      }
      await request.send(path, { updateDefinition: definition }, { idempotent: false });
    },
  };
}
