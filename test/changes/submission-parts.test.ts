import t from 'tap';
import type { LayerInfo } from '../../src/arcgis-request/layer-info.js';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { submissionPartsOf } from '../../src/changes/submission-parts.js';

// The parts of a submission are grouped under a key of hook, service and the parent's key value: what a related row
// names its parent by. Services (and hooks) whose parents share key values must never mix their submissions.

const layer = (id: number, relationships: LayerInfo['relationships']): LayerInfo =>
  ({ id, name: `layer ${id}`, objectIdField: 'OBJECTID', fields: [], relationships }) as unknown as LayerInfo;

const parents = layer(0, [{ relatedTableId: 1, role: 'origin', keyField: 'globalid' }]);
const inspections = layer(1, [{ relatedTableId: 0, role: 'destination', keyField: 'parentglobalid' }]);
const GUID = '{6E2E1D7C-3B41-4B0E-9B7A-6C1F4F0E2A11}';

const created = (hook: string, layerId: number, attributes: Record<string, unknown>): ChangeEvent =>
  ({
    type: 'change.created',
    hook,
    layer: { id: layerId, name: `layer ${layerId}` },
    key: { objectId: 1, globalId: layerId === 0 ? GUID : '{0B7C8E2A-1111-4222-8333-944455556666}' },
    after: { attributes },
    ts: 1_700_000_000_000,
  }) as unknown as ChangeEvent;

/** The submission key of the parts of one parent and one inspection, on `hook`, of `service`. */
function keysOf(hook: string, service: string): string[] {
  const events = [created(hook, 0, { globalid: GUID }), created(hook, 1, { parentglobalid: GUID.toLowerCase() })];
  return submissionPartsOf(events, [parents, inspections], service).map((part) => part.submission);
}

t.test('a parent and its related row share their submission: the key value read in one spelling', async (t) => {
  const [parent, related] = keysOf('default', 'Hosted/Parcels.FeatureServer');
  t.match(parent, /^[0-9a-f]{32}$/);
  t.equal(related, parent);
});

t.test('the same key value in another service, or on another hook, is another submission', async (t) => {
  const [here] = keysOf('default', 'Hosted/Parcels.FeatureServer');
  const [otherService] = keysOf('default', 'Hosted/Inspections.FeatureServer');
  const [otherHook] = keysOf('county', 'Hosted/Parcels.FeatureServer');
  t.not(otherService, here);
  t.not(otherHook, here);
  t.not(otherHook, otherService);
});
