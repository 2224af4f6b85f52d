import { formatServiceName, type ServiceName } from '../arcgis/service-name.js';
import type { EventFamily, EventFields, StoredEvent } from './envelope.js';

/**
 * What happened to a service, recorded with its time in the activity hash (`<prefix>:activity`): a webhook
 * `delivery` reached geohook (new or a repeat), a gap's edits were `backfill`ed, or geohook `poll`ed it.
 */
export type ActivityKind = 'delivery' | 'backfill' | 'poll';

/** One activity of one service. */
export interface ServiceActivity {
  kind: ActivityKind;
  service: ServiceName;
}

const KINDS: readonly string[] = ['delivery', 'backfill', 'poll'] satisfies ActivityKind[];

/** The hash field of an activity: `<kind>\t<service>`. */
export const activityField = ({ kind, service }: ServiceActivity): string => `${kind}\t${service}`;

/** The activity a hash field names; `undefined` for a field geohook did not write. */
export function parseActivityField(field: string): ServiceActivity | undefined {
  const tab = field.indexOf('\t');
  const kind = field.slice(0, tab);
  return tab > 0 && KINDS.includes(kind) ? { kind: kind as ActivityKind, service: field.slice(tab + 1) } : undefined;
}

/** The type of service each family comes from, for payloads that do not say (ArcGIS Online's). */
const SERVICE_TYPES: Record<EventFamily, string | undefined> = { gp: 'GPServer', feature: 'FeatureServer', unknown: undefined };

/** The service an event names, `folder/name.Type` (the type from its family when the payload does not say); undefined when none. */
export function serviceNameOf({ service, family }: Pick<EventFields, 'service' | 'family'>): ServiceName | undefined {
  const { folderName, serviceName, serviceType = SERVICE_TYPES[family] } = service;
  return serviceType === undefined ? undefined : formatServiceName(folderName, serviceName, serviceType);
}

/**
 * What an event tells of its service: a delivery, a backfill or a poll; `undefined` when it names no service,
 * or when no signature vouches for a delivery (the hash is kept for good: no unsigned request adds to it).
 */
export function activityOf(event: StoredEvent): ServiceActivity | undefined {
  if (event.source === undefined && !event.verified) return undefined;
  const service = serviceNameOf(event);
  if (service === undefined) return undefined;
  return { kind: event.source === undefined ? 'delivery' : event.source, service };
}
