import { formatServiceName } from '../arcgis/service-name.js';
import { serviceNameOf } from '../events/service-activity.js';
import { isStoredEvent, type RoutedHead } from '../fanout/routed-event.js';

/**
 * What a stream lane keeps in order (docs/streams.md#order): a change event's feature (its service, layer and key, the
 * GlobalID else the object id); a submission's parent feature; a stored feature or GP event, its service (those events
 * name ranges, not features). Events of one key are published one after the other, each once the previous one was
 * acknowledged; events of different keys are published side by side.
 */
export function orderKeyOf(event: RoutedHead): string {
  if (isStoredEvent(event)) return `service\n${serviceNameOf(event) ?? ''}`;
  const { folderName, serviceName, serviceType } = event.service;
  const key = event.key.globalId ?? String(event.key.objectId ?? '');
  return `feature\n${formatServiceName(folderName, serviceName, serviceType)}\n${event.layer.id}\n${key}`;
}
