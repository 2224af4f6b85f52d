import type { ChangeEvent } from '../../src/changes/change-event.js';
import { buildSubmissionEvent, type SubmissionEvent } from '../../src/changes/submission-event.js';
import type { StoredEvent } from '../../src/events/envelope.js';
import { envelopeOf } from './envelope.js';

/** A `change.updated` of the Parcels layer: status Open → Closed by inspector7 (docs/changes.md's example, trimmed). */
export function changeUpdated(overrides: Partial<ChangeEvent> = {}): ChangeEvent {
  return {
    id: '9b1f0c5e2d7a4b3c8e6f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d',
    type: 'change.updated',
    op: 'u',
    hook: 'default',
    service: {
      folderName: 'Hosted',
      serviceName: 'Parcels',
      serviceType: 'FeatureServer',
      url: 'https://gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer',
    },
    layer: { id: 0, name: 'Parcels' },
    key: { objectId: 55, globalId: '{4F95E7F8-8065-419C-AB38-C2E1E37A70BF}' },
    before: { attributes: { status: 'Open' } },
    after: { attributes: { objectid: 55, status: 'Closed', owner: 'A & B <Holdings>' }, geometry: { x: -117.19, y: 34.05 } },
    changedFields: ['status'],
    geometryChanged: false,
    source: { origin: 'webhook', serverGens: [1773230457695, 1773244883393], transaction: { id: '0a10', index: 0, total: 1 } },
    editor: { user: 'inspector7', at: '2026-11-25T14:59:58.120Z' },
    ts: '2026-11-25T14:59:58.120Z',
    ...overrides,
  };
}

/** A `change.submission` of Hosted/Parcels: parcel 12 (status Open) created with inspection 3, closed by its window. */
export function parcelSubmission(): SubmissionEvent {
  const service = { folderName: 'Hosted', serviceName: 'Parcels', serviceType: 'FeatureServer' as const, url: 'https://gis.example.com/x' };
  return buildSubmissionEvent(
    {
      hook: 'default',
      serviceName: 'Hosted/Parcels.FeatureServer',
      service,
      ts: '2026-11-27T06:03:04.120Z',
      layer: { id: 0, name: 'Parcels' },
      key: { objectId: 12, globalId: '{A3E0A3E0-0000-4000-8000-000000000012}' },
      after: { attributes: { objectid: 12, status: 'Open' } },
    },
    [{ layer: { id: 1, name: 'Inspections' }, key: { objectId: 3 }, after: { attributes: { objectid: 3 } } }],
    [],
    'window',
  );
}

/** A stored ArcGIS Online feature delivery (an array of items) of Hosted/Parcels, layer 0. */
export function storedFeatureEvent(): StoredEvent {
  const body = JSON.stringify([{ name: 'parcels-hook', layerId: 0, orgId: 'org1', serviceName: 'Parcels', events: ['FeaturesEdited'] }]);
  return {
    ...envelopeOf('feature', 'default', body),
    type: 'feature.FeaturesEdited',
    types: ['feature.FeaturesEdited'],
    service: { folderName: 'Hosted', serviceName: 'Parcels' },
    changes: { url: 'https://gis.example.com/x/extractChanges', serverGens: [1, 2], layerId: 0, trusted: true },
  };
}

/** A stored ArcGIS Enterprise GP delivery: job j1a2b3 of Tools/Buffer failed. */
export function storedGpEvent(): StoredEvent {
  const body = JSON.stringify({
    serviceType: 'GPServer',
    jobId: 'j1a2b3',
    folderName: 'Tools',
    serviceName: 'Buffer',
    events: [{ eventType: 'JobFailed' }],
  });
  return { ...envelopeOf('gp', 'default', body), service: { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' } };
}

/** A `whsec_` secret of 32 random-looking bytes (fixed, so tests are repeatable). */
export const SECRET_A = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
/** A second secret, for rotation. */
export const SECRET_B = `whsec_${Buffer.from('a second key of thirty-two bytes').toString('base64')}`;
