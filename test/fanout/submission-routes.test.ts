import t from 'tap';
import { buildSubmissionEvent } from '../../src/changes/submission-event.js';
import { routeMatcher } from '../../src/fanout/route-match.js';

// change.submission in routes and subscriptions (issue 55): taken by name only, its filters read the parent's row.

const service = { folderName: 'Hosted', serviceName: 'Parcels', serviceType: 'FeatureServer' as const, url: 'https://gis.example.com/x' };
const submission = buildSubmissionEvent(
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
