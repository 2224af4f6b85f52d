import t from 'tap';
import { routeMatcher } from '../../src/fanout/route-match.js';
import { parcelSubmission } from '../helpers/relay-events.js';

// change.submission in routes and subscriptions (issue 55): taken by name only, its filters read the parent's row.

const submission = parcelSubmission();
const fields = [{ id: 0, fields: [{ name: 'status', type: 'esriFieldTypeString' }] }];

t.test('change.* does not take change.submission: a route names it', async (t) => {
  t.equal(routeMatcher({ types: ['change.*'] })(submission), false);
  t.equal(routeMatcher({ types: ['*'] } as never)(submission), false, 'nor does *');
  t.equal(routeMatcher({ types: ['change.submission'] })(submission), true);
});

t.test("a submission route's services, layers and where read the parent; changed takes none", async (t) => {
  const types = ['change.submission'];
  t.equal(routeMatcher({ types, services: ['Hosted/Parcels.FeatureServer'], layers: [0] })(submission), true);
  t.equal(routeMatcher({ types, layers: [1] })(submission), false, "a related row's layer is not the submission's");
  t.equal(routeMatcher({ types, where: "status = 'Open'" })(submission, fields), true);
  t.equal(routeMatcher({ types, where: "status = 'Closed'" })(submission, fields), false);
  t.equal(routeMatcher({ types, changed: ['status'] })(submission, fields), false);
});

t.test('a submission crosses nothing: a route with emit takes it as itself, never as change.entered', async (t) => {
  const where = "status = 'Open'";
  t.equal(routeMatcher({ types: ['change.submission'], where, emit: 'both' })(submission, fields), true);
  t.equal(routeMatcher({ types: ['change.entered'], where, emit: 'both' })(submission, fields), false);
});
