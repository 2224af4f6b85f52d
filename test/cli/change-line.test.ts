import t from 'tap';
import { changeLine } from '../../src/cli/change-line.js';
import { changeUpdated } from '../helpers/relay-events.js';

t.test("an update's line shows each changed field from its old value to its new, and a moved geometry", async (t) => {
  t.equal(changeLine(changeUpdated()), 'U Parcels/0 {4F95…} status: Open → Closed');
  t.equal(changeLine(changeUpdated({ geometryChanged: true })), 'U Parcels/0 {4F95…} status: Open → Closed (+geometry)');
});

t.test('an update that shows no change says why: its edits undid each other, or its previous values are unknown', async (t) => {
  t.match(
    changeLine(changeUpdated({ changedFields: [] })),
    /^U Parcels\/0 \{4F95…\} \(no tracked field changed: edits made at once are merged/,
  );
  const unknown = changeUpdated();
  delete unknown.changedFields;
  delete unknown.before;
  t.match(changeLine(unknown), /^U Parcels\/0 \{4F95…\} \(no previous values: its fields are not tracked \(CHANGES_TRACK\)/);
  t.equal(changeLine(changeUpdated({ changedFields: [], geometryChanged: true })), 'U Parcels/0 {4F95…} (+geometry)', 'a move is a change');
});

t.test('creates and deletes name the feature alone', async (t) => {
  const created = changeUpdated({ op: 'c', type: 'change.created', key: { objectId: 7 }, before: null });
  delete created.changedFields;
  t.equal(changeLine(created), 'C Parcels/0 #7');
  const deleted = changeUpdated({ op: 'd', type: 'change.deleted', key: { objectId: 7 }, after: null });
  delete deleted.changedFields;
  t.equal(changeLine(deleted), 'D Parcels/0 #7');
});
