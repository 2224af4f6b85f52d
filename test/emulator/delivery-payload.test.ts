import t from 'tap';
import { featureChangeTypes } from '../../src/arcgis/change-types.js';
import type { Webhook } from '../../src/arcgis/webhook.js';
import { buildPayload } from '../../src/emulator/delivery/build-payload.js';
import type { EmulatorEvent } from '../../src/emulator/types.js';
import { classifyEvent } from '../../src/events/classify-event.js';
import type { FormFields } from '../../src/receiver/form-fields.js';
import { classifiable, formPayload } from '../../src/receiver/form-payload.js';
import { webhookRecord } from '../helpers/webhook-record.js';

const REST = 'http://127.0.0.1:7080/arcgis/rest/services';
const WHEN = 1730385704000;
const FORM = 'application/x-www-form-urlencoded';

const webhook = (fields: Partial<Webhook> = {}): Webhook =>
  webhookRecord({
    id: 'c4a7db24-0c5e-4a00-9103-0c7d2fdc03b4',
    name: 'parcels-hook',
    signatureKey: 'geohook-test-key',
    hookUrl: 'http://127.0.0.1:1/webhooks/default',
    ...fields,
  });

const gpHook = (fields: Partial<Webhook> = {}): Webhook =>
  webhook({ folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer', name: 'buffer-done', ...fields });
const gp = (outcome: 'succeeded' | 'failed' | 'canceled'): EmulatorEvent => ({ kind: 'gp', outcome, jobId: 'j42', taskName: 'Buffer' });
const feature = (changeType: string, serverGens: readonly [number, number] = [WHEN, WHEN + 1]): EmulatorEvent => ({
  kind: 'feature',
  changeTypes: [changeType],
  layerId: 0,
  serverGens,
});

/** What the receiver classifies, parsing the body the way it does for the content type. */
function receiverView(body: Buffer, contentType: string): unknown {
  if (contentType !== FORM) return JSON.parse(body.toString('utf8'));
  const fields: FormFields = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
  return classifiable(formPayload(fields, ['x-service']), true);
}

t.test('GP payloads classify as the job outcome, in both content types', async (t) => {
  const expected = { succeeded: 'gp.job.succeeded', failed: 'gp.job.failed', canceled: 'gp.job.canceled' } as const;
  for (const contentType of ['application/json', FORM] as const) {
    for (const [outcome, type] of Object.entries(expected) as ['succeeded' | 'failed' | 'canceled', string][]) {
      const { body } = buildPayload(gpHook({ contentType }), gp(outcome), { restBaseUrl: REST, when: WHEN });
      t.same(
        classifyEvent(receiverView(body, contentType)),
        {
          family: 'gp',
          types: [type],
          service: { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' },
        },
        `${outcome} as ${contentType}`,
      );
    }
  }
});

t.test('a GP payload has the product fields in order and a statusURL into the REST directory', async (t) => {
  const built = buildPayload(gpHook(), gp('canceled'), { restBaseUrl: `${REST}/`, when: WHEN });
  const payload = JSON.parse(built.body.toString('utf8')) as Record<string, unknown>;
  t.same(Object.keys(payload), ['serviceType', 'jobId', 'statusURL', 'name', 'taskName', 'folderName', 'serviceName', 'events']);
  t.equal(payload.statusURL, `${REST}/Tools/Buffer/GPServer/Buffer/jobs/j42`);
  t.same(payload.events, [{ eventType: 'esriJobCancelled', when: WHEN }]);
  t.equal(built.eventType, 'esriJobCancelled');
});

t.test('feature payloads classify as feature.<changeType> for every change type, in both content types', async (t) => {
  for (const contentType of ['application/json', FORM] as const) {
    for (const changeType of featureChangeTypes) {
      const { body } = buildPayload(webhook({ contentType }), feature(changeType), { restBaseUrl: REST, when: WHEN });
      const classification = classifyEvent(receiverView(body, contentType));
      t.same(classification.types, [`feature.${changeType}`], `${changeType} as ${contentType}`);
      t.equal(classification.family, 'feature');
    }
  }
});

t.test('a feature payload carries the webhook id and a changesUrl with the server generations', async (t) => {
  const built = buildPayload(webhook({ folderName: '' }), feature('FeaturesDeleted', [7, 9]), { restBaseUrl: REST, when: WHEN });
  const payload = JSON.parse(built.body.toString('utf8')) as Record<string, unknown>;
  t.same(Object.keys(payload), ['serviceType', 'changesUrl', 'name', 'id', 'folderName', 'serviceName', 'events']);
  t.equal(payload.id, 'c4a7db24-0c5e-4a00-9103-0c7d2fdc03b4');
  t.equal(payload.changesUrl, `${REST}/Parcels/FeatureServer/extractChanges?serverGens=%5B7,9%5D`, 'no folder segment in the root folder');
  t.equal(payload.folderName, '');
});

t.test('pjson is indented by two spaces and json is compact', async (t) => {
  const compact = buildPayload(webhook(), feature('FeaturesCreated'), { restBaseUrl: REST, when: WHEN }).body.toString('utf8');
  const pretty = buildPayload(webhook({ payloadFormat: 'pjson' }), feature('FeaturesCreated'), {
    restBaseUrl: REST,
    when: WHEN,
  }).body.toString('utf8');
  t.equal(compact, JSON.stringify(JSON.parse(compact)));
  t.equal(pretty, JSON.stringify(JSON.parse(compact), null, 2));
  t.match(pretty, /^\{\n {2}"serviceType": "FeatureServer",\n/);
});

t.test('a form body is the single field payload holding the JSON, percent-encoded', async (t) => {
  const json = buildPayload(webhook({ payloadFormat: 'pjson' }), feature('FeaturesUpdated'), { restBaseUrl: REST, when: WHEN });
  const form = buildPayload(webhook({ payloadFormat: 'pjson', contentType: FORM }), feature('FeaturesUpdated'), {
    restBaseUrl: REST,
    when: WHEN,
  });
  t.equal(form.contentType, FORM);
  t.equal(form.body.toString('utf8'), `payload=${encodeURIComponent(json.body.toString('utf8'))}`);
  t.same([...new URLSearchParams(form.body.toString('utf8')).keys()], ['payload']);
  t.notMatch(form.body.toString('utf8'), /[ \n+&]/, 'spaces and newlines are encoded, no stray separators');
});

t.test('the signature is the known-answer sha256=<base64> of the exact body bytes', async (t) => {
  const expected =
    '{"serviceType":"FeatureServer","changesUrl":"http://127.0.0.1:7080/arcgis/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=%5B1730385704000,1730385704001%5D","name":"parcels-hook","id":"c4a7db24-0c5e-4a00-9103-0c7d2fdc03b4","folderName":"Hosted","serviceName":"Parcels","events":[{"eventType":"FeaturesCreated","when":1730385704000}]}';
  const json = buildPayload(webhook(), feature('FeaturesCreated'), { restBaseUrl: REST, when: WHEN });
  t.equal(json.body.toString('utf8'), expected);
  t.equal(json.signature, 'sha256=sueXzFL7B8Ei+pjYWTfI6nT3Hq/NX4yw7fGPMNJ7hNo=');
  const form = buildPayload(webhook({ contentType: FORM }), feature('FeaturesCreated'), { restBaseUrl: REST, when: WHEN });
  t.equal(form.signature, 'sha256=yTGxuDXXchF3KZMowOrNzLN8Vyz0uuyXAsLVbQacIas=', 'a form is signed over the whole form body');
});

t.test('a webhook without a signature key gets no signature', async (t) => {
  const built = buildPayload(webhook({ signatureKey: '' }), gp('succeeded'), { restBaseUrl: REST, when: WHEN });
  t.equal(built.signature, undefined);
  t.notOk('signature' in built);
});
