import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { backfillEvent } from '../../src/backfill/backfill-event.js';
import { buildEvent } from '../../src/events/build-event.js';
import { EventQueue } from '../../src/queue/event-queue.js';
import { backfillQueueName } from '../../src/queue/names.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import { aheadKey, serverGensKey, watermarksKey } from '../../src/redis/keys.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const raw = new Redis(redis.url);
t.teardown(() => raw.disconnect());

const SERVICE_URL = 'https://gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer';
const ONLINE_URL = 'https://services.arcgis.com/Org1/ArcGIS/rest/services/Trees/FeatureServer';
const PARCELS = 'default Hosted/Parcels.FeatureServer';

/** An ArcGIS Enterprise feature delivery of the generations `(from, to]`; `when` makes other bytes for the same range. */
const enterprise = (from: number, to: number, when = to) => ({
  serviceType: 'FeatureServer',
  changesUrl: `${SERVICE_URL}/extractChanges?serverGens=%5B${from},${to}%5D`,
  name: 'geohook',
  id: 'w1',
  folderName: 'Hosted',
  serviceName: 'Parcels',
  events: [{ eventType: 'FeaturesCreated', when }],
});

/** An ArcGIS Online item of layer `layerId`, its changesUrl percent-encoded as Online sends it. */
const online = (layerId: number, from: number, to: number) => ({
  name: 'trees',
  layerId,
  orgId: 'Org1',
  serviceName: 'Trees',
  lastUpdatedTime: to,
  changesUrl: encodeURIComponent(`${ONLINE_URL}/extractChanges?serverGens=[${from},${to}]&async=true`),
  events: ['FeaturesUpdated'],
});

/** Trusts the two servers above. */
const serviceLocator = createServiceLocator({ trusted: ['https://gis.example.com', 'https://services.arcgis.com/Org1/ArcGIS/'] });

const delivery = (payload: unknown, hook = 'default') =>
  buildEvent(
    { raw: Buffer.from(JSON.stringify(payload)), hook, contentType: 'application/json', verified: true, classified: payload },
    serviceLocator,
  );

/** The scopes of this file: their servers are at generation 1000 unless a test says otherwise. */
const SCOPES = [PARCELS, 'default Trees.FeatureServer#0', 'default Trees.FeatureServer#1', 'other Trees.FeatureServer#1'];

/** An event queue whose scopes' servers are at `serverGen`. */
async function setup(t: Test, serverGen = 1000) {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix });
  await eventQueue.ready();
  for (const scope of SCOPES) {
    const serviceUrl = scope.includes('Trees') ? ONLINE_URL : SERVICE_URL;
    await eventQueue.confirm(scope.split(' ')[0]!, [{ scope, from: serverGen, to: serverGen, serviceUrl }]);
  }
  const gaps = new Queue(backfillQueueName, { connection, prefix });
  /** The gap jobs no worker took yet, as `[from, to]`, by `from`. */
  const gapRanges = async () =>
    (await gaps.getJobs(['waiting', 'delayed']))
      .filter((job) => job.name === 'gap')
      .map((job) => [job.data.from, job.data.to])
      .sort(([a], [b]) => Number(a) - Number(b));
  t.teardown(async () => {
    await gaps.close();
    await eventQueue.close();
    connection.disconnect();
  });
  const watermarks = () => raw.hgetall(watermarksKey(prefix));
  const featureJobs = async () => (await eventQueue.queue('feature-events').getJobs()).length;
  const ahead = () => raw.hgetall(aheadKey(prefix));
  const serverGens = () => raw.hgetall(serverGensKey(prefix));
  return { eventQueue, prefix, gaps, gapRanges, watermarks, featureJobs, ahead, serverGens };
}

t.test('a range handed over is not handed over again; one past the watermark leaves one gap to backfill', async (t) => {
  const { eventQueue, gaps, gapRanges, watermarks, featureJobs } = await setup(t);
  t.same(await eventQueue.enqueue(delivery(enterprise(10, 11))), { duplicate: false, spooled: false }, 'the first range: new');
  t.same(await watermarks(), { [PARCELS]: '11' }, 'the watermark starts at the first range known');
  t.same((await eventQueue.enqueue(delivery(enterprise(11, 12)))).duplicate, false, 'the next range: new');
  t.same(await gapRanges(), [], 'ranges that chain leave no gap');

  t.same((await eventQueue.enqueue(delivery(enterprise(11, 12, 999)))).duplicate, true, 'other bytes, same range: a duplicate');
  t.same((await eventQueue.enqueue(delivery(enterprise(15, 16)))).duplicate, false, 'a range past the watermark: new');
  t.same(await watermarks(), { [PARCELS]: '16' });
  const [gap, ...more] = await gaps.getJobs(['delayed']);
  t.same(more, [], 'one gap, waiting a second for a late delivery');
  t.equal(gap?.name, 'gap');
  t.same(gap?.data, { scope: PARCELS, hook: 'default', serviceUrl: SERVICE_URL, from: '12', to: '15' }, 'the generations in between');
  t.same((await eventQueue.enqueue(delivery(enterprise(16, 18)))).duplicate, false, 'a range ending past the watermark: new');
  t.same(await watermarks(), { [PARCELS]: '18' });
  t.equal(await featureJobs(), 4, 'a job per new range, none for the duplicates');
  t.same(await gapRanges(), [['12', '15']], 'no gap behind a range that chains');
});

t.test('each layer of an ArcGIS Online array keeps its own watermark; each hook its own', async (t) => {
  const { eventQueue, gaps, watermarks } = await setup(t);
  t.same((await eventQueue.enqueue(delivery([online(0, 5, 7), online(1, 3, 7)]))).duplicate, false);
  t.same(await watermarks(), { 'default Trees.FeatureServer#0': '7', 'default Trees.FeatureServer#1': '7' }, 'both items count');
  t.same((await eventQueue.enqueue(delivery([online(1, 6, 7)]))).duplicate, true, 'layer 1 handed over already');
  t.same((await eventQueue.enqueue(delivery([online(1, 6, 7)], 'other'))).duplicate, false, 'on another hook: new');
  t.same((await eventQueue.enqueue(delivery([online(1, 7, 9), online(0, 7, 8)]))).duplicate, false, 'any new range makes it new');
  t.same((await eventQueue.enqueue(delivery([online(0, 10, 12)]))).duplicate, false);
  const [gap] = await gaps.getJobs(['delayed']);
  t.same(gap?.data, { scope: 'default Trees.FeatureServer#0', hook: 'default', serviceUrl: ONLINE_URL, from: '8', to: '10' });
});

t.test('a backfilled range is enqueued once, whatever the watermark says', async (t) => {
  const { eventQueue, featureJobs } = await setup(t);
  await eventQueue.enqueue(delivery(enterprise(20, 21)));
  const range = {
    hook: 'default',
    folderName: 'Hosted',
    serviceName: 'Parcels',
    layerId: undefined,
    changesUrl: `${SERVICE_URL}/extractChanges?serverGens=%5B12%2C20%5D&layers=%5B0%5D`,
    when: 1_700_000_000_000,
    types: ['FeaturesCreated', 'FeaturesDeleted'],
  };
  const { event } = backfillEvent(range);
  t.match(event, { family: 'feature', source: 'backfill', verified: false, types: ['feature.FeaturesCreated', 'feature.FeaturesDeleted'] });
  t.same(event.changes?.serverGens, [12, 20]);
  t.same((await eventQueue.enqueue(backfillEvent(range))).duplicate, false, 'below the watermark, but reserved for it: new');
  t.same((await eventQueue.enqueue(backfillEvent(range))).duplicate, true, 'the same range again (a retried backfill): a duplicate');
  t.equal(await featureJobs(), 2);
});

t.test('an unsigned delivery, or one whose service name ArcGIS could not have made, moves no watermark', async (t) => {
  const { eventQueue, gaps, watermarks } = await setup(t);
  const unsigned = (payload: unknown) =>
    buildEvent(
      { raw: Buffer.from(JSON.stringify(payload)), hook: 'default', contentType: 'application/json', verified: false, classified: payload },
      serviceLocator,
    );
  t.same((await eventQueue.enqueue(unsigned(enterprise(10, 11)))).duplicate, false);
  t.same((await eventQueue.enqueue(unsigned(enterprise(10, 11, 5)))).duplicate, false, 'the same range unsigned: stored again');
  t.same((await eventQueue.enqueue(delivery({ ...enterprise(20, 21), serviceName: 'Par\tcels' }))).duplicate, false);
  t.same((await eventQueue.enqueue(delivery({ ...enterprise(30, 31), serviceName: 'Par\ncels' }))).duplicate, false);
  t.same((await eventQueue.enqueue(delivery({ ...enterprise(40, 41), serviceName: 'X <!channel>' }))).duplicate, false);
  t.same((await eventQueue.enqueue(delivery({ ...enterprise(50, 51), folderName: '\u001b]0;TITLE\u0007' }))).duplicate, false);
  t.same(await watermarks(), {});
  t.same(await gaps.getJobCounts('waiting'), { waiting: 0 });
});

t.test('issue 33 C2: a range whose changesUrl is on no trusted URL is handed over untracked: no watermark, no gap, no read', async (t) => {
  const { eventQueue, gaps, watermarks, ahead } = await setup(t);
  for (const changesUrl of [
    'http://127.0.0.1:19090/evil/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[10,11]',
    'https://gis.example.com.evil.test/server/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[12,13]',
    'https://user:pass@gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=[14,15]',
    'https://services.arcgis.com/OtherOrg/ArcGIS/rest/services/Trees/FeatureServer/extractChanges?serverGens=[16,17]',
  ]) {
    t.same((await eventQueue.enqueue(delivery({ ...enterprise(0, 0), changesUrl }))).duplicate, false, new URL(changesUrl).host);
  }
  t.same(await watermarks(), {});
  t.same(await ahead(), {});
  t.same(await gaps.getJobCounts('waiting'), { waiting: 0 });
});

t.test('issue 33 H1: a range past the server generation waits for the server; one it never reaches moves no watermark', async (t) => {
  const { eventQueue, gaps, watermarks, ahead, serverGens } = await setup(t, 20);
  t.same((await eventQueue.enqueue(delivery(enterprise(10, 11)))).duplicate, false);
  t.same(await watermarks(), { [PARCELS]: '11' }, 'within the server generation: counts at once');

  const forged = delivery(enterprise(9_007_199_254_740_000, 9_007_199_254_740_990));
  t.same((await eventQueue.enqueue(forged)).duplicate, false, 'a range far past the server: handed over');
  t.same(await watermarks(), { [PARCELS]: '11' }, 'but it moves no watermark');
  t.match(await ahead(), { [PARCELS]: /^9007199254740000\t9007199254740990\t/ }, 'it waits for the server');
  t.same(
    (await gaps.getJobs(['waiting'])).map((job) => job.name),
    ['confirm'],
    'and a job goes to read the server',
  );

  t.same((await eventQueue.enqueue(delivery(enterprise(11, 12)))).duplicate, false, 'the next real delivery: new, not a duplicate');
  t.same(await watermarks(), { [PARCELS]: '12' });

  // The server is read at 25: the forged range stays ahead, then is refused once it has waited long enough.
  const read = { scope: PARCELS, from: 25, to: 25, serviceUrl: SERVICE_URL };
  t.same(await eventQueue.confirm('default', [read], Date.now() - 60_000), { ahead: 1, refused: [] });
  t.same(await eventQueue.confirm('default', [read], Date.now() + 1), {
    ahead: 0,
    refused: [[9_007_199_254_740_000, 9_007_199_254_740_990]],
  });
  t.same(await ahead(), {});
  t.same(await eventQueue.confirm('default', [read]), { ahead: 0, refused: [] }, 'nothing left');
  t.same((await serverGens())[PARCELS], `25\t${SERVICE_URL}`, "the server's generation, and where it was read");
  t.same((await eventQueue.enqueue(delivery(enterprise(24, 25)))).duplicate, false);
  t.same(await watermarks(), { [PARCELS]: '25' });
  const gap = (await gaps.getJobs(['waiting', 'delayed'])).find((job) => job.name === 'gap');
  t.match(gap?.data, { from: '12', to: '24' }, 'the generations the server has and no delivery covered: a gap');
});

t.test('ranges waiting for their server count in order once it confirms them, gaps and all', async (t) => {
  const { eventQueue, gapRanges, watermarks, ahead } = await setup(t, 10);
  await eventQueue.enqueue(delivery(enterprise(9, 10)));
  await eventQueue.enqueue(delivery(enterprise(14, 15)));
  await eventQueue.enqueue(delivery(enterprise(10, 12)));
  t.same(await watermarks(), { [PARCELS]: '10' });
  t.match(await ahead(), { [PARCELS]: String });
  t.same(await eventQueue.confirm('default', [{ scope: PARCELS, from: 13, to: 13, serviceUrl: SERVICE_URL }]), { ahead: 1, refused: [] });
  t.same(await watermarks(), { [PARCELS]: '12' }, '(10, 12] counted; (14, 15] still ahead of 13');
  t.same(await eventQueue.confirm('default', [{ scope: PARCELS, from: 15, to: 15, serviceUrl: SERVICE_URL }]), { ahead: 0, refused: [] });
  t.same(await watermarks(), { [PARCELS]: '15' });
  t.same(await gapRanges(), [['12', '14']]);
});

t.test('a service name a payload invents is recorded in the activity hash only while it holds fewer than 10,000', async (t) => {
  const { eventQueue, prefix } = await setup(t);
  const fields = Array.from({ length: 10_000 }, (_, n) => [`delivery\tS${n}.FeatureServer`, '1']).flat();
  await raw.hset(`${prefix}:activity`, ...fields);
  await eventQueue.enqueue(delivery({ ...enterprise(1, 2), serviceName: 'Invented' }));
  t.equal(await raw.hexists(`${prefix}:activity`, 'delivery\tHosted/Invented.FeatureServer'), 0, 'a new one past the bound: not recorded');
  await eventQueue.enqueue(delivery({ ...enterprise(2, 3), serviceName: 'S7', folderName: '' }));
  t.not(await raw.hget(`${prefix}:activity`, 'delivery\tS7.FeatureServer'), '1', 'a known one: recorded');
});

t.test('a range waiting for its server, delivered again with other bytes (a second webhook), is a duplicate', async (t) => {
  const { eventQueue, watermarks, featureJobs } = await setup(t, 10);
  t.same((await eventQueue.enqueue(delivery(enterprise(11, 12)))).duplicate, false);
  t.same((await eventQueue.enqueue(delivery(enterprise(11, 12, 999)))).duplicate, true, 'the same range: a duplicate');
  t.same((await eventQueue.enqueue(delivery(enterprise(11, 13)))).duplicate, false, 'a range that only overlaps it: new');
  t.same(await watermarks(), {});
  t.equal(await featureJobs(), 2);
});

t.test('a server read confirms only the ranges announced for that server', async (t) => {
  const { eventQueue, watermarks, ahead } = await setup(t, 10);
  await eventQueue.enqueue(delivery(enterprise(10, 12)));
  const elsewhere = {
    scope: PARCELS,
    from: 20,
    to: 20,
    serviceUrl: 'https://gis.example.com/other/rest/services/Hosted/Parcels/FeatureServer',
  };
  t.same(await eventQueue.confirm('default', [elsewhere]), { ahead: 1, refused: [] }, 'another server: nothing confirmed');
  t.same(await watermarks(), {});
  t.same(await eventQueue.confirm('default', [{ ...elsewhere, serviceUrl: SERVICE_URL }]), { ahead: 0, refused: [] });
  t.same(await watermarks(), { [PARCELS]: '12' });
  t.same(await ahead(), {});
});

t.test('a server that has not the service announced confirms nothing and keeps no generation for it', async (t) => {
  const { eventQueue, serverGens, ahead } = await setup(t);
  const scope = 'default Hosted/Invented.FeatureServer';
  await eventQueue.enqueue(delivery({ ...enterprise(1, 2), serviceName: 'Invented' }));
  t.match(await ahead(), { [scope]: String });
  t.same(await eventQueue.confirm('default', [{ scope, from: 0, to: 0, serviceUrl: SERVICE_URL }], Date.now() + 1), {
    ahead: 0,
    refused: [[1, 2]],
  });
  t.notOk(scope in (await serverGens()), 'no generation kept');
  t.same(await ahead(), {});
});

t.test("a range announced at another URL than its scope's server was read at waits for that server", async (t) => {
  const { eventQueue, watermarks, ahead } = await setup(t, 100);
  const other = 'https://gis.example.com/other/rest/services/Hosted/Parcels/FeatureServer';
  await eventQueue.enqueue(delivery({ ...enterprise(1, 2), changesUrl: `${other}/extractChanges?serverGens=[1,2]` }));
  t.same(await watermarks(), {}, 'not counted on the generation read elsewhere');
  t.match(await ahead(), { [PARCELS]: new RegExp(`^1\t2\t${other}\t`) });
});
