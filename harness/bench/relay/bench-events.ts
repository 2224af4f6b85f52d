import { createHash } from 'node:crypto';
import type { ChangeEvent } from '../../../src/changes/change-event.js';

/** The n-th change event of a bench run: an update of a Parcels feature, its id unique to `run` and `n`, `ts` now. */
export function benchChangeEvent(run: string, n: number): ChangeEvent {
  const now = new Date().toISOString();
  return {
    id: createHash('sha256').update(`${run}\n${n}`).digest('hex'),
    type: 'change.updated',
    op: 'u',
    hook: 'default',
    service: {
      folderName: 'Hosted',
      serviceName: 'Parcels',
      serviceType: 'FeatureServer',
      url: 'http://127.0.0.1/arcgis/rest/services/Hosted/Parcels/FeatureServer',
    },
    layer: { id: 0, name: 'Parcels' },
    key: { objectId: n + 1, globalId: `{${createHash('md5').update(String(n)).digest('hex').toUpperCase()}}` },
    before: { attributes: { status: 'Open' } },
    after: { attributes: { objectid: n + 1, parcel_id: `P-${n}`, status: 'Closed', owner: 'Ada', area_sqm: 812.5 } },
    changedFields: ['status'],
    geometryChanged: false,
    source: { origin: 'webhook', serverGens: [n, n + 1], transaction: { id: run, index: 0, total: 1 } },
    editor: { user: 'inspector7', at: now },
    ts: now,
  };
}
