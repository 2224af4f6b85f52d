import t from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { showKey, showValue, summarizeEvent } from '../../src/relay/formats/summary.js';
import { changeUpdated, storedFeatureEvent, storedGpEvent } from '../helpers/relay-events.js';

const lineOf = (overrides: Partial<ChangeEvent>): string => summarizeEvent(changeUpdated(overrides)).line;

t.test('an update reads "Layer {key}: field old → new by editor"', async (t) => {
  t.equal(lineOf({}), 'Parcels {4F95…}: status Open → Closed by inspector7');
});

t.test('creates, deletes, snapshot reads and schema changes have their own line', async (t) => {
  t.equal(lineOf({ type: 'change.created', op: 'c', before: null }), 'Parcels {4F95…} created by inspector7');
  t.equal(lineOf({ type: 'change.deleted', op: 'd', after: null }), 'Parcels {4F95…} deleted by inspector7');
  t.equal(lineOf({ type: 'change.read', op: 'r' }), 'Parcels {4F95…} read by a snapshot');
  t.equal(
    lineOf({ type: 'change.schema', key: {}, schema: { added: ['notes'], removed: ['old'] } }),
    'Parcels: fields added notes; removed old',
  );
});

t.test('an update shows 3 changed fields, counts the rest, says when the geometry moved, and works without previous values', async (t) => {
  const after = { attributes: { status: 'Closed', a: 1, b: true, c: null } };
  t.equal(
    lineOf({ changedFields: ['status', 'a', 'b', 'c'], before: { attributes: { status: 'Open', a: 0 } }, after, geometryChanged: true }),
    'Parcels {4F95…}: status Open → Closed, a 0 → 1, b → true, +1 more, geometry moved by inspector7',
  );
  t.equal(lineOf({ changedFields: [], geometryChanged: true, key: { objectId: 55 } }), 'Parcels #55: geometry moved by inspector7');
  const { changedFields: _unknown, editor: _editor, ...unknownChanges } = changeUpdated();
  t.equal(summarizeEvent(unknownChanges).line, 'Parcels {4F95…}: updated');
});

t.test('values are shown as text, null, or JSON, and cut at 60 characters', async (t) => {
  t.equal(showValue(undefined), 'null');
  t.equal(showValue({ x: 1 }), '{"x":1}');
  t.equal(showValue('y'.repeat(80)), `${'y'.repeat(59)}…`);
  t.equal(showKey({}), '');
  t.equal(showKey({ globalId: 'abcdef' }), '{abcd…}');
});

t.test('feature and GP events read as their service and what happened', async (t) => {
  t.equal(summarizeEvent(storedFeatureEvent()).line, 'Hosted/Parcels.FeatureServer (layer 0): FeaturesEdited');
  t.equal(summarizeEvent(storedGpEvent()).line, 'Tools/Buffer.GPServer: job j1a2b3 failed');
  const unreadable = { ...storedGpEvent(), body: 'not json' };
  t.equal(summarizeEvent(unreadable).line, 'Tools/Buffer.GPServer: job failed', 'a body that does not parse names no job');
  t.match(summarizeEvent(storedGpEvent()).facts, [
    { title: 'Type', value: 'gp.job.failed' },
    { title: 'Service', value: 'Tools/Buffer.GPServer' },
  ]);
});

t.test('the facts of a change: type, service, layer, feature, editor, time, event', async (t) => {
  t.same(
    summarizeEvent(changeUpdated()).facts.map(({ title }) => title),
    ['Type', 'Service', 'Layer', 'Feature', 'Editor', 'Time', 'Event'],
  );
});
