import t from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { backfillEvent } from '../../src/backfill/backfill-event.js';
import { buildEvent } from '../../src/events/build-event.js';

const locator = createServiceLocator({ trusted: ['https://gis.example.com/server/'] });

/** The accepted event of a signed Enterprise feature delivery whose changesUrl is on `origin`. */
function deliveryAt(origin: string) {
  const payload = {
    serviceType: 'FeatureServer',
    folderName: 'Hosted',
    serviceName: 'Parcels',
    changesUrl: `${origin}/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[1,2]`,
    events: [{ eventType: 'FeaturesUpdated', when: 1 }],
  };
  const raw = Buffer.from(JSON.stringify(payload));
  return buildEvent({ raw, hook: 'default', contentType: 'application/json', verified: true, classified: payload }, locator);
}

t.test('issue 51 (N6): changes.trusted says whether geohook trusts the changesUrl a payload names', async (t) => {
  const trusted = deliveryAt('https://gis.example.com/server');
  t.match(trusted.event.changes, { serverGens: [1, 2], trusted: true }, 'under a trusted URL');
  t.equal(trusted.ranges.length, 1, 'and its range is tracked');
  const untrusted = deliveryAt('https://evil.example');
  t.match(untrusted.event.changes, { url: /^https:\/\/evil\.example\//, trusted: false }, 'elsewhere: kept, marked untrusted');
  t.same(untrusted.ranges, [], 'and no range is tracked');
  const backfilled = backfillEvent({
    hook: 'default',
    folderName: 'Hosted',
    serviceName: 'Parcels',
    layerId: undefined,
    changesUrl: 'https://gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[2,3]',
    when: 1,
    types: ['FeaturesUpdated'],
  });
  t.match(backfilled.event.changes, { trusted: true }, 'a backfilled event names the URL geohook read: trusted');
});
