import type { ServerResponse } from 'node:http';
import t, { type Test } from 'tap';
import { defaultWebhookSettings, type WebhookSettings } from '../../src/arcgis/webhook-settings.js';
import type { Webhook } from '../../src/arcgis/webhook.js';
import { EmulatorClock } from '../../src/emulator/clock.js';
import { DeliveryEngine, type DeliveryEngineOptions } from '../../src/emulator/delivery/delivery-engine.js';
import type { EmulatorEvent } from '../../src/emulator/types.js';
import { verify } from '../../src/signature/verify.js';
import { startSink, type ReceivedRequest } from '../helpers/http-sink.js';
import { waitFor } from '../helpers/wait.js';
import { webhookRecord } from '../helpers/webhook-record.js';

/** A sink at `/webhooks/default`; `handler` decides the answer. */
async function startServer(t: Test, handler: (response: ServerResponse) => void): Promise<{ url: string; received: ReceivedRequest[] }> {
  const sink = await startSink(t, (_request, response) => handler(response));
  return { url: `${sink.url}/webhooks/default`, received: sink.received };
}

const answer = (status: number) => (response: ServerResponse) => response.writeHead(status).end();

const webhook = (id: string, hookUrl: string, fields: Partial<Webhook> = {}): Webhook =>
  webhookRecord({ id, name: `hook-${id}`, hookUrl, ...fields });

const created: EmulatorEvent = { kind: 'feature', changeTypes: ['FeaturesCreated'], layerId: 0, serverGens: [1, 2] };

/** An engine that skips the waits between attempts; closed at teardown. */
function engineFor(t: Test, settings: Partial<WebhookSettings> = {}, options: Partial<DeliveryEngineOptions> = {}) {
  const deactivated: string[] = [];
  const engine = new DeliveryEngine({
    clock: new EmulatorClock(),
    getSettings: () => ({ ...defaultWebhookSettings, ...settings }),
    onDeactivate: (webhookId) => deactivated.push(webhookId),
    restBaseUrl: 'http://127.0.0.1:7080/arcgis/rest/services',
    sleep: async () => undefined,
    ...options,
  });
  t.teardown(() => engine.close());
  return { engine, deactivated };
}

t.test('fire returns pending records at once and skips inactive webhooks', async (t) => {
  const server = await startServer(t, answer(200));
  const { engine } = engineFor(t);
  const records = engine.fire([webhook('a', server.url), webhook('b', server.url, { active: false })], created);
  t.same(
    records.map((record) => [record.webhookId, record.outcome, record.event]),
    [['a', 'pending', 'FeaturesCreated']],
  );
  await engine.idle();
  t.equal(records[0]?.outcome, 'delivered', 'the returned record is updated in place');
  t.equal(server.received.length, 1, 'the inactive webhook got nothing');
});

t.test('a hanging receiver does not delay another webhook delivery', async (t) => {
  const held: ServerResponse[] = [];
  const hanging = await startServer(t, (response) => held.push(response));
  const quick = await startServer(t, answer(202));
  const { engine } = engineFor(t);
  const [slow, fast] = engine.fire([webhook('slow', hanging.url), webhook('fast', quick.url)], created);
  await waitFor('the fast delivery to finish', () => fast?.outcome !== 'pending', { intervalMs: 5 });
  t.equal(fast?.outcome, 'delivered');
  await waitFor('the slow delivery to be held', () => held.length === 1, { intervalMs: 5 });
  t.equal(slow?.outcome, 'pending', 'the hanging delivery is still waiting for its answer');
  held[0]?.writeHead(200).end();
  await engine.idle();
  t.equal(slow?.outcome, 'delivered');
});

t.test('the signature header is sent and verifies over the received bytes; the record names the header, not its value', async (t) => {
  const server = await startServer(t, answer(200));
  const { engine } = engineFor(t);
  const [signed, unsigned] = engine.fire([webhook('s', server.url, { signatureKey: 'k3y' }), webhook('u', server.url)], created);
  await engine.idle();
  const withHeader = server.received.filter((r) => r.headers['x-service'] !== undefined);
  t.equal(withHeader.length, 1, 'one delivery carried a signature');
  const [delivery] = withHeader as [ReceivedRequest];
  const signature = String(delivery.headers['x-service']);
  t.equal(verify(['k3y'], delivery.body, signature), true);
  t.equal(verify(['wrong'], delivery.body, signature), false);
  t.strictSame([signed?.signatureHeader, unsigned?.signatureHeader], ['x-service', undefined]);
  t.notOk(JSON.stringify(engine.deliveries()).includes(signature), 'no record keeps the signature');
});

t.test('the delivery log keeps the last maxDeliveries records and maxStatusesPerWebhook statuses', async (t) => {
  const server = await startServer(t, answer(200));
  const { engine } = engineFor(t, {}, { maxDeliveries: 3, maxStatusesPerWebhook: 2 });
  const ids = [1, 2, 3, 4, 5, 6, 7].map((n) => engine.fire([webhook(`w${n}`, server.url)], created)[0]?.webhookId);
  await engine.idle();
  t.same(
    engine.deliveries().map((record) => record.webhookId),
    ids.slice(4),
  );
  const same = webhook('same', server.url);
  for (let n = 0; n < 5; n += 1) {
    engine.fire([same], created);
    await engine.idle();
  }
  t.equal(engine.notificationStatus('same').length, 2);
});

t.test('close aborts deliveries in flight without counting them as failures, and fires nothing after', async (t) => {
  const hanging = await startServer(t, () => undefined);
  const { engine, deactivated } = engineFor(t, { numberOfFailures: 1 });
  const [record] = engine.fire([webhook('w', hanging.url)], created);
  await waitFor('the hanging server to receive the delivery', () => hanging.received.length === 1, { intervalMs: 5 });
  await engine.close();
  t.equal(record?.outcome, 'failed');
  t.equal(record?.attempts[0]?.error, 'aborted: the emulator is closing');
  t.same(deactivated, []);
  t.equal(engine.failuresByDay('w').size, 0);
  t.same(engine.fire([webhook('w', hanging.url)], created), []);
});

t.test('an onDeactivate that throws is logged and does not stall the engine', async (t) => {
  const server = await startServer(t, answer(500));
  const logged: string[] = [];
  const logger = {
    info: () => undefined,
    warn: (_: object, msg: string) => logged.push(msg),
    error: (_: object, msg: string) => logged.push(msg),
  };
  const onDeactivate = (): void => {
    throw new Error('store gone');
  };
  const { engine } = engineFor(t, { notificationAttempts: 1, numberOfFailures: 1 }, { onDeactivate, logger });
  engine.fire([webhook('w', server.url)], created);
  await engine.idle();
  t.same(logged, ['webhook delivery failed', 'webhook deactivated by the failure policy', 'delivery bookkeeping failed']);
});

t.test('fifty deliveries in flight at once raise no MaxListenersExceededWarning', async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning.name);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  const held: ServerResponse[] = [];
  const server = await startServer(t, (response) => held.push(response));
  const { engine } = engineFor(t);
  engine.fire(
    Array.from({ length: 50 }, (_, index) => webhook(`w${index}`, server.url)),
    created,
  );
  await waitFor('50 deliveries held', () => held.length === 50, { intervalMs: 5 });
  for (const response of held) response.writeHead(200).end();
  await engine.idle();
  await new Promise((resolve) => setImmediate(resolve)); // process.emitWarning emits on the next tick
  t.same(
    warnings.filter((name) => name === 'MaxListenersExceededWarning'),
    [],
  );
});
