import { createHash } from 'node:crypto';
import t from 'tap';
import { defaultWebhookSettings } from '../../src/arcgis/webhook-settings.js';
import type { Webhook } from '../../src/arcgis/webhook.js';
import { buildPayload } from '../../src/emulator/delivery/build-payload.js';
import { DeliveryEngine } from '../../src/emulator/delivery/delivery-engine.js';
import type { EmulatorEvent } from '../../src/emulator/types.js';
import { startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { webhookRecord } from '../helpers/webhook-record.js';

const redis = await startRedis(t);
const NOW = Date.UTC(2024, 10, 1, 12);
const REST = 'http://127.0.0.1:7080/arcgis/rest/services';
const FORM = 'application/x-www-form-urlencoded';

const webhook = (id: string, hookUrl: string, fields: Partial<Webhook>): Webhook =>
  webhookRecord({ id, name: `hook-${id}`, signatureKey: TEST_KEY, hookUrl, created: NOW, modified: NOW, ...fields });

const gpSucceeded: EmulatorEvent = { kind: 'gp', outcome: 'succeeded', jobId: 'jobe2e', taskName: 'Buffer' };
const featuresUpdated: EmulatorEvent = { kind: 'feature', changeTypes: ['FeaturesUpdated'], layerId: 0, serverGens: [1, 2] };
const cases = [
  {
    name: 'GP as JSON',
    queue: 'gp-events',
    type: 'gp.job.succeeded',
    event: gpSucceeded,
    contentType: 'application/json',
    payloadFormat: 'json',
  },
  { name: 'GP as a form', queue: 'gp-events', type: 'gp.job.succeeded', event: gpSucceeded, contentType: FORM, payloadFormat: 'pjson' },
  {
    name: 'feature as JSON',
    queue: 'feature-events',
    type: 'feature.FeaturesUpdated',
    event: featuresUpdated,
    contentType: 'application/json',
    payloadFormat: 'pjson',
  },
  {
    name: 'feature as a form',
    queue: 'feature-events',
    type: 'feature.FeaturesUpdated',
    // The next edit: the same range again would be handed over once only.
    event: { ...featuresUpdated, serverGens: [2, 3] },
    contentType: FORM,
    payloadFormat: 'json',
  },
] as const;

t.test('GP and feature deliveries in both content types reach geohook receiver queues verified', async (t) => {
  const receiver = await startReceiver(t, redis);
  const engine = new DeliveryEngine({
    clock: { now: () => NOW },
    getSettings: () => ({ ...defaultWebhookSettings, notificationAttempts: 1 }),
    onDeactivate: () => t.fail('no webhook should deactivate'),
    restBaseUrl: REST,
  });
  t.teardown(() => engine.close());
  const hookUrl = `${receiver.url}/webhooks/default`;
  for (const [index, c] of cases.entries()) {
    const service = c.event.kind === 'gp' ? { folderName: 'Tools', serviceName: 'Buffer', serviceType: 'GPServer' } : {};
    const hook = webhook(`w${index}`, hookUrl, { ...service, contentType: c.contentType, payloadFormat: c.payloadFormat });
    const [record] = engine.fire([hook], c.event);
    await engine.idle();
    t.same(
      record?.attempts.map((attempt) => attempt.statusCode),
      [202],
      `${c.name}: the receiver answered 202`,
    );
    t.equal(record?.outcome, 'delivered');

    const { body } = buildPayload(hook, c.event, { restBaseUrl: REST, when: NOW });
    const job = await receiver.app.eventQueue.queue(c.queue).getJob(createHash('sha256').update(body).digest('hex'));
    t.ok(job, `${c.name}: a job with the id of the delivered bytes is in ${c.queue}`);
    t.equal(job?.name, c.type);
    t.match(job?.data, { type: c.type, verified: true, contentType: c.contentType, service: { serviceName: hook.serviceName } });
  }
});

t.test('a delivery signed with another key is refused by the receiver and fails', async (t) => {
  const receiver = await startReceiver(t, redis);
  const engine = new DeliveryEngine({
    clock: { now: () => NOW },
    getSettings: () => ({ ...defaultWebhookSettings, notificationAttempts: 1 }),
    onDeactivate: () => undefined,
    restBaseUrl: REST,
  });
  t.teardown(() => engine.close());
  const [record] = engine.fire([webhook('bad', `${receiver.url}/webhooks/default`, { signatureKey: 'not-the-key' })], featuresUpdated);
  await engine.idle();
  t.same(
    record?.attempts.map((attempt) => attempt.statusCode),
    [401],
  );
  t.equal(record?.outcome, 'failed');
});
