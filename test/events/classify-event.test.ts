import t from 'tap';
import { classifyEvent } from '../../src/events/classify-event.js';
import { fixture } from '../helpers/paths.js';

/** A fixture in test/fixtures, parsed as JSON. */
function parsedFixture(name: string): unknown {
  return JSON.parse(fixture(name).toString('utf8'));
}

/** An Enterprise geoprocessing delivery reporting `eventType`. */
function gpPayload(eventType: string): Record<string, unknown> {
  return {
    serviceType: 'GPServer',
    jobId: 'j1',
    statusURL: 'https://gis.example.com/server/rest/services/Tools/Buffer/GPServer/Buffer/jobs/j1',
    name: 'buffer-done',
    taskName: 'Buffer',
    folderName: 'Tools',
    serviceName: 'Buffer',
    events: [{ eventType, when: 1730385704000 }],
  };
}

/** An Enterprise feature-service delivery reporting `eventTypes`. */
function featurePayload(...eventTypes: string[]): Record<string, unknown> {
  return {
    serviceType: 'FeatureServer',
    changesUrl: 'https://server.com/server/rest/services/Hosted/Parcels/FeatureServer/extractChanges',
    name: 'parcels',
    id: 'c4a7db24-0c5e-4a00-9103-0c7d2fdc03b4',
    folderName: 'Hosted',
    serviceName: 'Parcels',
    events: eventTypes.map((eventType) => ({ eventType, when: 1730385704000 })),
  };
}

const PARCELS = { folderName: 'Hosted', serviceName: 'Parcels', serviceType: 'FeatureServer' };
const BUFFER = { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' };

t.test('an Enterprise feature delivery is a feature event named after its eventType', async (t) => {
  t.strictSame(classifyEvent(parsedFixture('enterprise-feature-created.json')), {
    family: 'feature',
    types: ['feature.FeaturesCreated'],
    service: { serviceName: 'ServiceName', serviceType: 'FeatureServer' },
  });
});

t.test('an empty folderName is omitted from the service and a present one is kept', async (t) => {
  const fromFixture = classifyEvent(parsedFixture('enterprise-feature-created.json'));
  t.equal('folderName' in fromFixture.service, false, 'the fixture has folderName ""');
  t.strictSame(classifyEvent(featurePayload('FeaturesCreated')).service, PARCELS);
});

t.test('a succeeded geoprocessing job is gp.job.succeeded with its service', async (t) => {
  t.strictSame(classifyEvent(parsedFixture('enterprise-gp-succeeded.json')), {
    family: 'gp',
    types: ['gp.job.succeeded'],
    service: BUFFER,
  });
});

t.test('JOB_CANCELLED is gp.job.canceled', async (t) => {
  t.strictSame(classifyEvent(parsedFixture('enterprise-gp-cancelled.json')), {
    family: 'gp',
    types: ['gp.job.canceled'],
    service: BUFFER,
  });
});

t.test('geoprocessing outcomes are classified in any case, with or without the esri and Job prefixes', async (t) => {
  const expected: Record<string, string> = {
    esriJobSucceeded: 'gp.job.succeeded',
    jobsucceeded: 'gp.job.succeeded',
    SUCCEEDED: 'gp.job.succeeded',
    ESRI_JOB_SUCCEEDED: 'gp.job.succeeded',
    esriJobFailed: 'gp.job.failed',
    failed: 'gp.job.failed',
    esriJobTimedOut: 'gp.job.failed',
    esriJobCancelled: 'gp.job.canceled',
    canceled: 'gp.job.canceled',
    CANCELLED: 'gp.job.canceled',
  };
  for (const [eventType, type] of Object.entries(expected)) {
    t.strictSame(classifyEvent(gpPayload(eventType)), { family: 'gp', types: [type], service: BUFFER }, eventType);
  }
});

t.test('an ArcGIS Online array delivery is a FeatureServer feature event', async (t) => {
  t.strictSame(classifyEvent(parsedFixture('agol-features-created.json')), {
    family: 'feature',
    types: ['feature.FeaturesCreated'],
    service: { serviceName: 'myService', serviceType: 'FeatureServer' },
  });
});

t.test('every event type a delivery reports is listed in order without repeats', async (t) => {
  t.strictSame(classifyEvent(parsedFixture('agol-multi-event.json')), {
    family: 'feature',
    types: ['feature.FeaturesCreated', 'feature.FeaturesUpdated'],
    service: { serviceName: 'Pest_Inspections', serviceType: 'FeatureServer' },
  });
  t.strictSame(classifyEvent(featurePayload('FeaturesDeleted', 'FeaturesCreated', 'FeaturesDeleted')).types, [
    'feature.FeaturesDeleted',
    'feature.FeaturesCreated',
  ]);
});

t.test('feature change types are matched in any case and returned in their canonical spelling', async (t) => {
  t.strictSame(classifyEvent(featurePayload('featuresupdated')).types, ['feature.FeaturesUpdated']);
  t.strictSame(classifyEvent(featurePayload('ATTACHMENTSDELETED')).types, ['feature.AttachmentsDeleted']);
  t.strictSame(classifyEvent(featurePayload('featuresupdated', 'FeaturesUpdated')).types, ['feature.FeaturesUpdated']);
});

t.test('all ten canonical feature change types round trip', async (t) => {
  const changeTypes = [
    'FeaturesCreated',
    'FeaturesUpdated',
    'FeaturesDeleted',
    'FeaturesEdited',
    'AttachmentsCreated',
    'AttachmentsUpdated',
    'AttachmentsDeleted',
    'LayerSchemaChanged',
    'LayerDefinitionChanged',
    'FeatureServiceDefinitionChanged',
  ];
  for (const changeType of changeTypes) {
    t.strictSame(
      classifyEvent(featurePayload(changeType)),
      { family: 'feature', types: [`feature.${changeType}`], service: PARCELS },
      changeType,
    );
  }
  t.strictSame(
    classifyEvent(featurePayload(...changeTypes)).types,
    changeTypes.map((name) => `feature.${name}`),
  );
});

t.test('a well-formed new feature event type is kept verbatim', async (t) => {
  t.strictSame(classifyEvent(featurePayload('FeaturesArchived')), {
    family: 'feature',
    types: ['feature.FeaturesArchived'],
    service: PARCELS,
  });
});

t.test('a malformed feature event type is dropped', async (t) => {
  t.strictSame(classifyEvent(featurePayload('*', 'FeaturesCreated', '../x')).types, ['feature.FeaturesCreated']);
  t.strictSame(classifyEvent(featurePayload('*')), { family: 'unknown', types: ['unknown'], service: PARCELS });
  t.strictSame(classifyEvent(featurePayload('../x')), { family: 'unknown', types: ['unknown'], service: PARCELS });
});

t.test('the legacy ArcGIS Online changeType string is classified', async (t) => {
  const legacy = [
    {
      layerId: 0,
      serviceName: 'myService',
      changeType: 'FeaturesDeleted',
      orgId: 'myorgId',
      changesUrl: 'https://olserver/myorgId/ArcGIS/rest/services/myService/FeatureServer/extractChanges',
    },
  ];
  t.strictSame(classifyEvent(legacy), {
    family: 'feature',
    types: ['feature.FeaturesDeleted'],
    service: { serviceName: 'myService', serviceType: 'FeatureServer' },
  });
});

t.test('payloads that are not objects are unknown', async (t) => {
  for (const payload of ['FeaturesCreated', 42, null, undefined, true, [], ['FeaturesCreated']]) {
    t.strictSame(classifyEvent(payload), { family: 'unknown', types: ['unknown'], service: {} }, JSON.stringify(payload));
  }
});

t.test('objects that name no GIS service are unknown', async (t) => {
  for (const payload of [{}, { foo: 1 }, { events: ['FeaturesCreated'] }, [{ foo: 1 }]]) {
    t.strictSame(classifyEvent(payload), { family: 'unknown', types: ['unknown'], service: {} }, JSON.stringify(payload));
  }
});

t.test('a geoprocessing delivery with an unrecognised outcome is unknown but keeps its service', async (t) => {
  for (const eventType of ['esriJobCancelling', 'esriJobExploded', '']) {
    t.strictSame(classifyEvent(gpPayload(eventType)), { family: 'unknown', types: ['unknown'], service: BUFFER }, eventType);
  }
});

t.test('a feature delivery that reports no events is unknown but keeps its service', async (t) => {
  t.strictSame(classifyEvent(featurePayload()), { family: 'unknown', types: ['unknown'], service: PARCELS });
  const { events: _events, ...withoutEvents } = featurePayload('FeaturesCreated');
  t.strictSame(classifyEvent(withoutEvents), { family: 'unknown', types: ['unknown'], service: PARCELS });
});

t.test('a delivery of another service type is unknown', async (t) => {
  const mapServer = { ...featurePayload('FeaturesCreated'), serviceType: 'MapServer' };
  t.strictSame(classifyEvent(mapServer), {
    family: 'unknown',
    types: ['unknown'],
    service: { folderName: 'Hosted', serviceName: 'Parcels', serviceType: 'MapServer' },
  });
});
