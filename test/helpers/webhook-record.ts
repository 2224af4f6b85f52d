import type { Webhook } from '../../src/arcgis/webhook.js';

/**
 * A webhook record as the emulator stores one: on Hosted/Parcels.FeatureServer, every change type, active,
 * JSON, unsigned; `fields` override any of it.
 */
export function webhookRecord(fields: Partial<Webhook> = {}): Webhook {
  return {
    id: 'w',
    folderName: 'Hosted',
    serviceName: 'Parcels',
    serviceType: 'FeatureServer',
    name: 'hook',
    changeTypes: ['*'],
    signatureKey: '',
    hookUrl: 'http://receiver.test/webhooks/default',
    active: true,
    contentType: 'application/json',
    scheduleInfo: {},
    payloadFormat: 'json',
    created: 0,
    modified: 0,
    ownerId: 'admin',
    modifiedId: 'admin',
    ...fields,
  };
}
