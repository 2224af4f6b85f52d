import { Redis } from 'ioredis';
import t from 'tap';
import { PingLog } from '../../src/queue/ping-log.js';
import { sign } from '../../src/signature/sign.js';
import { countJobs, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

// ArcGIS Online's `status` operation sends this: one item, `events: ["NoContent"]`, no layer, no changesUrl.
const PING = JSON.stringify([
  { name: 'geohook', orgId: 'geohookOrg', serviceName: 'Parcels', lastUpdatedTime: 1764000000000, events: ['NoContent'] },
]);

const redis = await startRedis(t);

t.test('a signed test ping is acknowledged and recorded, never queued as an edit', async (t) => {
  const receiver = await startReceiver(t, redis);
  const client = new Redis(redis.url);
  t.teardown(() => client.disconnect());
  const before = Date.now();
  const response = await receiver.post(PING, { 'x-esriHook-Signature': sign(TEST_KEY, PING) });
  t.equal(response.status, 202);
  t.same(await response.json(), { status: 'ping' });
  const form = `payload=${PING}`;
  const formResponse = await receiver.post(form, {
    'content-type': 'application/x-www-form-urlencoded',
    'x-esriHook-Signature': sign(TEST_KEY, form),
  });
  t.equal(formResponse.status, 202, 'as a form too');

  t.equal(await countJobs(receiver.app), 0, 'no job in any queue');
  const pings = new PingLog(client, receiver.prefix);
  const { default: at } = await pings.lastPings();
  t.ok(at !== undefined && at >= before && at <= Date.now(), 'the last ping time of the hook is in Redis');
  const metrics = await (await fetch(`${receiver.url}/metrics`)).text();
  t.match(metrics, /geohook_deliveries_total\{hook="default",outcome="ping",status="202"\} 2/);
});

t.test('a ping is judged by its signature first, and a delivery that reports an edit is no ping', async (t) => {
  const receiver = await startReceiver(t, redis);
  t.equal((await receiver.post(PING, { 'x-esriHook-Signature': sign('another-key', PING) })).status, 401, 'a wrong signature');
  const withLayer = JSON.stringify([{ ...JSON.parse(PING)[0], layerId: 0, events: ['FeaturesCreated'] }]);
  const accepted = await receiver.post(withLayer, { 'x-esriHook-Signature': sign(TEST_KEY, withLayer) });
  t.match(await accepted.json(), { status: 'accepted' });
  const noContentWithChanges = JSON.stringify([
    { ...JSON.parse(PING)[0], layerId: 0, changesUrl: 'https://h/FeatureServer/extractChanges?serverGens=[1,2]' },
  ]);
  const queued = await receiver.post(noContentWithChanges, { 'x-esriHook-Signature': sign(TEST_KEY, noContentWithChanges) });
  t.match(await queued.json(), { status: 'accepted' }, 'NoContent beside a changesUrl is queued: it names edits');
  t.equal(await countJobs(receiver.app), 2);
});
