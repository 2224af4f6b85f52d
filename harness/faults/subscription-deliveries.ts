import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SubscriptionConfig } from '../../src/config/subscription-schema.js';
import { sign } from '../../src/signature/sign.js';
import { eventIdOf, FAULTS_SECRET, type SignedDelivery } from './deliveries.js';

/** The kinds of delivery of the subscriptions fault, taken in turn: delivery `index` is of kind `index % 3`. */
export const deliveryKinds = ['buffer-succeeded', 'clip-failed', 'parcels-created'] as const;
export type DeliveryKind = (typeof deliveryKinds)[number];

/** The kind of delivery `index` of a load made by {@link mixedDelivery}. */
export const kindOf = (index: number): DeliveryKind => deliveryKinds[index % deliveryKinds.length]!;

/**
 * The subscriptions of the fault's GEOHOOK_CONFIG, each with the kinds it takes, written out by hand (not derived from
 * geohook's matcher): a family pattern, two families, and one event type of one service.
 */
export const faultSubscriptions = [
  { config: { name: 'gp', types: ['gp.*'] }, takes: ['buffer-succeeded', 'clip-failed'] },
  { config: { name: 'everything', types: ['feature.*', 'gp.*'] }, takes: ['buffer-succeeded', 'clip-failed', 'parcels-created'] },
  {
    config: { name: 'buffer-done', types: ['gp.job.succeeded'], services: ['Tools/Buffer.GPServer'] },
    takes: ['buffer-succeeded'],
  },
] as const satisfies readonly { config: SubscriptionConfig; takes: readonly DeliveryKind[] }[];

/** Writes the GEOHOOK_CONFIG of the subscriptions fault into `dir`; its path. */
export function writeSubscriptionsConfig(dir: string): string {
  const path = join(dir, 'geohook.json');
  writeFileSync(path, JSON.stringify({ subscriptions: faultSubscriptions.map(({ config }) => config) }));
  return path;
}

function gpPayload(tag: string, index: number, service: string, eventType: string): object {
  const jobId = `j-${tag}-${index}`;
  return {
    serviceType: 'GPServer',
    jobId,
    statusURL: `http://127.0.0.1:7080/arcgis/rest/services/Tools/${service}/GPServer/${service}/jobs/${jobId}`,
    name: 'faults',
    taskName: service,
    folderName: 'Tools',
    serviceName: service,
    events: [{ eventType, when: 1_700_000_000_000 + index }],
  };
}

/** An ArcGIS Enterprise feature delivery with no range of server generations (nothing to backfill or resolve). */
function featurePayload(tag: string, index: number): object {
  return {
    serviceType: 'FeatureServer',
    changesUrl: 'http://127.0.0.1:7080/arcgis/rest/services/Hosted/Parcels/FeatureServer/extractChanges',
    name: 'faults',
    id: `w-${tag}-${index}`,
    folderName: 'Hosted',
    serviceName: 'Parcels',
    events: [{ eventType: 'FeaturesCreated', when: 1_700_000_000_000 + index }],
  };
}

/**
 * Delivery `index` of load `tag`, of kind {@link kindOf}(index): a Buffer job that succeeded, a Clip job that failed,
 * features created in Parcels. Tag and index make every body (and event id) of a run distinct.
 */
export function mixedDelivery(tag: string, index: number): SignedDelivery {
  const kind = kindOf(index);
  const payload =
    kind === 'buffer-succeeded'
      ? gpPayload(tag, index, 'Buffer', 'esriJobSucceeded')
      : kind === 'clip-failed'
        ? gpPayload(tag, index, 'Clip', 'esriJobFailed')
        : featurePayload(tag, index);
  const body = Buffer.from(JSON.stringify(payload));
  return { body, signature: sign(FAULTS_SECRET, body), eventId: eventIdOf(body) };
}
