import t, { type Test } from 'tap';
import { PingLog } from '../../src/queue/ping-log.js';
import { connectRedis } from '../../src/redis/connection.js';
import { sign } from '../../src/signature/sign.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { eventOf } from '../helpers/envelope.js';
import { startSink } from '../helpers/http-sink.js';
import type { Json } from '../helpers/json.js';
import { countJobs, startReceiver, TEST_KEY, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// Deliveries of the emulator's ArcGIS Online organization: its payload shapes, its test ping and its
// consecutive-failure deactivation policy.

const redis = await startRedis(t);
const EDITS = 'services/Hosted/Parcels.FeatureServer/edits';

async function onlineAdmin(
  emulator: TestEmulator,
): Promise<(path: string, params?: Record<string, string>) => Promise<Record<string, Json>>> {
  const token = await emulator.token();
  return async (path, params = {}) => {
    const response = await fetch(`${emulator.url}/geohookOrg/ArcGIS/rest/admin/${path}`, {
      method: 'POST',
      body: new URLSearchParams({ ...params, token, f: 'json' }),
    });
    return (await response.json()) as Record<string, Json>;
  };
}

async function createHook(
  t: Test,
  emulator: TestEmulator,
  hookUrl: string,
  params: Record<string, string> = {},
): Promise<{ globalId: string; admin: Awaited<ReturnType<typeof onlineAdmin>> }> {
  const admin = await onlineAdmin(emulator);
  const created = await admin('services/Parcels/FeatureServer/WebHooks/create', {
    name: 'geohook',
    hookUrl,
    signatureKey: TEST_KEY,
    active: 'true',
    changeTypes: '*',
    ...params,
  });
  t.type(created.globalId, 'string', JSON.stringify(created));
  return { globalId: String(created.globalId), admin };
}

async function jobs(receiver: TestReceiver): Promise<Array<{ data: Record<string, Json> }>> {
  const stored = await receiver.app.eventQueue.queue('feature-events').getJobs(['waiting', 'active', 'completed']);
  return stored.map((job) => ({ data: eventOf(job) as unknown as Record<string, Json> }));
}

t.test('an edit reaches geohook as ArcGIS Online sends it, JSON or form, and its changes decode to the edit', async (t) => {
  const emulator = await startEmulator(t);
  // Two receivers: one receiver hands an edit's range over once, whichever webhook delivers it first.
  const [jsonReceiver, formReceiver] = [await startReceiver(t, redis), await startReceiver(t, redis)];
  await createHook(t, emulator, `${jsonReceiver.url}/webhooks/default`);
  await createHook(t, emulator, `${formReceiver.url}/webhooks/default`, {
    name: 'as-form',
    contentType: 'application/x-www-form-urlencoded',
  });
  const fired = await emulator.control(EDITS, { changeType: 'FeaturesUpdated', layerId: 1 });
  t.equal(fired.status, 200);
  const serverGens = fired.body.layerGens as [number, number];
  const [json, form] = (await Promise.all(
    [jsonReceiver, formReceiver].map((receiver) => waitFor('the delivery stored', async () => (await jobs(receiver))[0]?.data)),
  )) as [Record<string, Json>, Record<string, Json>];
  t.equal(json.contentType, 'application/json');
  t.equal(form.contentType, 'application/x-www-form-urlencoded');
  for (const data of [json, form]) {
    t.match(data, { family: 'feature', type: 'feature.FeaturesUpdated', verified: true, service: { serviceName: 'Parcels' } });
    t.same(data.changes, {
      url: `${emulator.url}/geohookOrg/ArcGIS/rest/services/Parcels/FeatureServer/extractChanges?serverGens=[${serverGens.join(',')}]&async=true&returnAttachments=false`,
      serverGens,
      layerId: 1,
      // These receivers trust no URL of the emulator (no ADMIN_URL, no TRUSTED_ORIGINS).
      trusted: false,
    });
  }
  const raw = Buffer.from(String(json.rawBody), 'base64').toString();
  t.match(
    raw,
    /^\[\{"name":"geohook","layerId":1,"orgId":"geohookOrg","serviceName":"Parcels","lastUpdatedTime":\d+,"changesUrl":"http%3a%2f%2f127\.0\.0\.1%3a/,
  );
  const formRaw = Buffer.from(String(form.rawBody), 'base64').toString();
  const [payload, field] = formRaw.slice('payload='.length).split('&x-esriHook-Signature=');
  t.equal(decodeURIComponent(field!), sign(TEST_KEY, payload!), 'the form signs the JSON in its field, as Esri samples read it');

  const deliveries = (await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as {
    deliveries: Array<{ signatureHeader?: string }>;
  };
  t.strictSame(
    deliveries.deliveries.map((delivery) => delivery.signatureHeader).filter((header) => header !== undefined),
    ['x-esriHook-Signature'],
    'only the JSON delivery signs in a header',
  );
  const changes = await fetch(`${(json.changes as { url: string }).url}&f=json&token=${await emulator.token()}`);
  t.match(
    await changes.json(),
    { statusUrl: /\/geohookOrg\/ArcGIS\/rest\/services\/Parcels\/FeatureServer\// },
    "the decoded URL is the organization's extractChanges",
  );
});

t.test('status sends the test ping, which geohook records and queues nothing for', async (t) => {
  const emulator = await startEmulator(t);
  const receiver = await startReceiver(t, redis);
  const { globalId, admin } = await createHook(t, emulator, `${receiver.url}/webhooks/default`, { active: 'false' });
  const answer = await admin(`services/Parcels/FeatureServer/WebHooks/${globalId}/status`);
  t.match(answer, { success: true, deliveryId: String });
  const connection = connectRedis({ url: redis.url });
  t.teardown(() => connection.disconnect());
  const pings = new PingLog(connection, receiver.prefix);
  await waitFor('the ping recorded', async () => (await pings.lastPings()).default !== undefined);
  t.equal(await countJobs(receiver.app), 0);
});

t.test('one attempt per delivery; consecutive failures deactivate the webhook, a success starts the count again', async (t) => {
  const emulator = await startEmulator(t);
  let status = 500;
  const sink = await startSink(t, (request, response) => {
    const token = new URL(request.url!, 'http://x').searchParams.get('crc_token');
    if (request.method === 'GET' && token !== null) return response.end(JSON.stringify({ response_token: sign(TEST_KEY, token) }));
    response.writeHead(status).end();
  });
  const { globalId, admin } = await createHook(t, emulator, `${sink.url}/hook`);
  await admin('webhooks/webhookSettings', { numberOfFailures: '2' });
  const webhook = async (): Promise<Record<string, Json>> => admin(`services/Parcels/FeatureServer/WebHooks/${globalId}`);
  const deliveries = async (): Promise<Array<{ outcome: string; attempts: unknown[] }>> =>
    ((await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as { deliveries: Array<{ outcome: string; attempts: unknown[] }> })
      .deliveries;
  const edit = async (count: number): Promise<void> => {
    await emulator.control(EDITS, {});
    await waitFor(`${count} deliveries finished`, async () => (await deliveries()).filter((d) => d.outcome !== 'pending').length === count);
  };

  await edit(1);
  t.same((await deliveries())[0]!.attempts.length, 1, 'one attempt by default');
  t.match(await webhook(), { active: true }, 'one failure of two allowed');
  status = 200;
  await edit(2);
  status = 500;
  await edit(3);
  t.match(await webhook(), { active: true }, 'the success in between reset the count');
  await edit(4);
  t.match(await webhook(), { active: false }, 'two consecutive failures deactivate it');
  await emulator.control(EDITS, {});
  t.equal((await deliveries()).length, 4, 'an inactive webhook is not delivered to');
});
