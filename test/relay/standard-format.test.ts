import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import t, { type Test } from 'tap';
import { parseWebhookSecret } from '../../src/config/relay-secrets.js';
import type { RoutedEvent } from '../../src/fanout/routed-event.js';
import { deliver } from '../../src/relay/deliver.js';
import { formatStandard, standardBody } from '../../src/relay/formats/standard.js';
import { startSink } from '../helpers/http-sink.js';
import { changeUpdated, SECRET_A, SECRET_B, storedFeatureEvent, storedGpEvent } from '../helpers/relay-events.js';

type Verifier = 'standardwebhooks' | 'svix';

/** A loopback receiver that verifies every request with `verifier` under `secret`: 204 when it verifies, 401 otherwise. */
async function verifyingSink(t: Test, verifier: Verifier, secret: string) {
  const webhook = verifier === 'svix' ? new SvixWebhook(secret) : new StandardWebhook(secret);
  const verdicts: string[] = [];
  const sink = await startSink(t, (request, response, body) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
    try {
      webhook.verify(body.toString('utf8'), headers);
      verdicts.push('verified');
      response.writeHead(204).end();
    } catch (err) {
      verdicts.push((err as Error).message);
      response.writeHead(401).end();
    }
  });
  return { ...sink, verdicts };
}

const events: [string, RoutedEvent][] = [
  ['a change event', changeUpdated()],
  ['a stored feature event', storedFeatureEvent()],
  ['a stored GP event', storedGpEvent()],
];

for (const verifier of ['standardwebhooks', 'svix'] as const) {
  t.test(`${verifier} verifies every relayed event`, async (t) => {
    const sink = await verifyingSink(t, verifier, SECRET_A);
    for (const [name, event] of events) {
      const outcome = await deliver(sink.url, formatStandard(event, { keys: [parseWebhookSecret(SECRET_A)] }));
      t.equal(outcome.delivered, true, name);
    }
    t.same(sink.verdicts, ['verified', 'verified', 'verified']);
  });

  t.test(`${verifier} refuses a tampered body`, async (t) => {
    const sink = await verifyingSink(t, verifier, SECRET_A);
    const request = formatStandard(changeUpdated(), { keys: [parseWebhookSecret(SECRET_A)] });
    const outcome = await deliver(sink.url, { ...request, body: request.body.replace('Closed', 'Opened') });
    t.equal(outcome.delivered, false);
    t.equal(outcome.delivered ? undefined : outcome.status, 401);
    t.match(sink.verdicts, [/signature/i]);
  });

  t.test(`${verifier} refuses a timestamp older than 5 minutes`, async (t) => {
    const sink = await verifyingSink(t, verifier, SECRET_A);
    const keys = [parseWebhookSecret(SECRET_A)];
    const old = await deliver(sink.url, formatStandard(changeUpdated(), { keys, nowMs: Date.now() - 6 * 60_000 }));
    const recent = await deliver(sink.url, formatStandard(changeUpdated(), { keys, nowMs: Date.now() - 4 * 60_000 }));
    t.equal(old.delivered, false);
    t.equal(recent.delivered, true, 'a 4-minute-old try still verifies: the refusal is the age');
    t.match(sink.verdicts, [/too old/i, 'verified']);
  });

  t.test(`${verifier} verifies under either secret while a route signs with two (rotation)`, async (t) => {
    const keys = [parseWebhookSecret(SECRET_B), parseWebhookSecret(SECRET_A)];
    for (const secret of [SECRET_A, SECRET_B]) {
      const sink = await verifyingSink(t, verifier, secret);
      t.equal((await deliver(sink.url, formatStandard(changeUpdated(), { keys }))).delivered, true);
    }
    const stranger = await verifyingSink(t, verifier, `whsec_${Buffer.alloc(32, 3).toString('base64')}`);
    t.equal((await deliver(stranger.url, formatStandard(changeUpdated(), { keys }))).delivered, false, 'a third secret does not verify');
  });
}

t.test('the body is {type, timestamp, data}: the event type, its time, the event', async (t) => {
  const event = changeUpdated();
  t.same(JSON.parse(standardBody(event)), { type: 'change.updated', timestamp: event.ts, data: event });
  const gp = storedGpEvent();
  const body = JSON.parse(standardBody(gp)) as { type: string; timestamp: string; data: Record<string, unknown> };
  t.equal(body.type, 'gp.job.failed');
  t.equal(body.timestamp, gp.receivedAt);
  t.match(body.data, { id: gp.id, payload: { jobId: 'j1a2b3' } }, 'a stored event as consumers get it, its payload parsed');
  t.notOk('rawBody' in body.data, 'without the base64 bytes');
  t.notOk('body' in body.data);
});

t.test('webhook-id is the event id on every try, webhook-timestamp the try time in seconds', async (t) => {
  const keys = [parseWebhookSecret(SECRET_A)];
  const first = formatStandard(changeUpdated(), { keys, nowMs: 1_800_000_000_999 });
  const later = formatStandard(changeUpdated(), { keys, nowMs: 1_800_000_300_000 });
  t.equal(first.headers['webhook-id'], changeUpdated().id);
  t.equal(later.headers['webhook-id'], changeUpdated().id);
  t.equal(first.headers['webhook-timestamp'], '1800000000');
  t.equal(later.headers['webhook-timestamp'], '1800000300');
  t.equal(first.body, later.body, 'the same body');
  t.not(first.headers['webhook-signature'], later.headers['webhook-signature'], 'signed anew');
  t.equal(first.headers['content-type'], 'application/json');
});
