import { parseServiceName } from '../arcgis/service-name.js';
import type { ChangeEvent } from './change-event.js';

/** The `service` of a change event of the service `serviceName` (`folder/name.FeatureServer`) at `serviceUrl`. */
export function changeServiceOf(serviceName: string, serviceUrl: URL, orgId: string | undefined): ChangeEvent['service'] {
  const { folder, name } = parseServiceName(serviceName);
  return {
    ...(folder === undefined ? {} : { folderName: folder }),
    serviceName: name,
    serviceType: 'FeatureServer',
    url: serviceUrl.href,
    ...(orgId === undefined ? {} : { orgId }),
  };
}
