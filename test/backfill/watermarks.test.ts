import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { backfillEvent } from '../../src/backfill/backfill-event.js';
import { EventQueue } from '../../src/queue/event-queue.js';
import { backfillQueueName, watermarksKey } from '../../src/queue/names.js';
import { buildEvent } from '../../src/receiver/build-event.js';
import { createProducerConnection } from '../../src/redis/connection.js';
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

const delivery = (payload: unknown, hook = 'default') =>
  buildEvent({ raw: Buffer.from(JSON.stringify(payload)), hook, contentType: 'application/json', verified: true, classified: payload });

async function setup(t: Test) {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix });
  await eventQueue.ready();
  const gaps = new Queue(backfillQueueName, { connection, prefix });
  t.teardown(async () => {
    await gaps.close();
    await eventQueue.close();
    connection.disconnect();
  });
  const watermarks = () => raw.hgetall(watermarksKey(prefix));
  const featureJobs = async () => (await eventQueue.queue('feature-events').getJobs()).length;
  return { eventQueue, gaps, watermarks, featureJobs };
}

t.test('a range handed over is not handed over again; one past the watermark leaves one gap to backfill', async (t) => {
  const { eventQueue, gaps, watermarks, featureJobs } = await setup(t);
  t.same(await eventQueue.enqueue(delivery(enterprise(10, 11))), { duplicate: false, spooled: false }, 'the first range: new');
  t.same(await watermarks(), { [PARCELS]: '11' }, 'the watermark starts at the first range known');
  t.same((await eventQueue.enqueue(delivery(enterprise(11, 12)))).duplicate, false, 'the next range: new');
  t.same(await gaps.getJobCounts('waiting'), { waiting: 0 }, 'ranges that chain leave no gap');

  t.same((await eventQueue.enqueue(delivery(enterprise(11, 12, 999)))).duplicate, true, 'other bytes, same range: a duplicate');
  t.same((await eventQueue.enqueue(delivery(enterprise(15, 16)))).duplicate, false, 'a range past the watermark: new');
  t.same(await watermarks(), { [PARCELS]: '16' });
  const [gap, ...more] = await gaps.getJobs(['waiting']);
  t.same(more, [], 'one gap');
  t.equal(gap?.name, 'gap');
  t.same(gap?.data, { scope: PARCELS, hook: 'default', serviceUrl: SERVICE_URL, from: '12', to: '15' }, 'the generations in between');
  t.same((await eventQueue.enqueue(delivery(enterprise(13, 14)))).duplicate, true, 'a late delivery inside the gap: a duplicate');
  t.same((await eventQueue.enqueue(delivery(enterprise(14, 18)))).duplicate, false, 'a range ending past the watermark: new');
  t.same(await watermarks(), { [PARCELS]: '18' });
  t.equal(await featureJobs(), 4, 'a job per new range, none for the duplicates');
  t.equal((await gaps.getJobs(['waiting'])).length, 1, 'no gap behind an overlapping range');
});

t.test('each layer of an ArcGIS Online array keeps its own watermark; each hook its own', async (t) => {
  const { eventQueue, gaps, watermarks } = await setup(t);
  t.same((await eventQueue.enqueue(delivery([online(0, 5, 7), online(1, 3, 7)]))).duplicate, false);
  t.same(await watermarks(), { 'default Trees.FeatureServer#0': '7', 'default Trees.FeatureServer#1': '7' }, 'both items count');
  t.same((await eventQueue.enqueue(delivery([online(1, 6, 7)]))).duplicate, true, 'layer 1 handed over already');
  t.same((await eventQueue.enqueue(delivery([online(1, 6, 7)], 'other'))).duplicate, false, 'on another hook: new');
  t.same((await eventQueue.enqueue(delivery([online(1, 7, 9), online(0, 7, 8)]))).duplicate, false, 'any new range makes it new');
  t.same((await eventQueue.enqueue(delivery([online(0, 10, 12)]))).duplicate, false);
  const [gap] = await gaps.getJobs(['waiting']);
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
  const event = backfillEvent(range);
  t.match(event, { family: 'feature', source: 'backfill', verified: false, types: ['feature.FeaturesCreated', 'feature.FeaturesDeleted'] });
  t.same(event.changes?.serverGens, [12, 20]);
  t.same((await eventQueue.enqueue(event)).duplicate, false, 'below the watermark, but reserved for it: new');
  t.same((await eventQueue.enqueue(backfillEvent(range))).duplicate, true, 'the same range again (a retried backfill): a duplicate');
  t.equal(await featureJobs(), 2);
});

t.test('an unsigned delivery, or one whose service name holds a tab or a line break, moves no watermark', async (t) => {
  const { eventQueue, gaps, watermarks } = await setup(t);
  const unsigned = (payload: unknown) =>
    buildEvent({
      raw: Buffer.from(JSON.stringify(payload)),
      hook: 'default',
      contentType: 'application/json',
      verified: false,
      classified: payload,
    });
  t.same((await eventQueue.enqueue(unsigned(enterprise(10, 11)))).duplicate, false);
  t.same((await eventQueue.enqueue(unsigned(enterprise(10, 11, 5)))).duplicate, false, 'the same range unsigned: stored again');
  t.same((await eventQueue.enqueue(delivery({ ...enterprise(20, 21), serviceName: 'Par\tcels' }))).duplicate, false);
  t.same((await eventQueue.enqueue(delivery({ ...enterprise(30, 31), serviceName: 'Par\ncels' }))).duplicate, false);
  t.same(await watermarks(), {});
  t.same(await gaps.getJobCounts('waiting'), { waiting: 0 });
});
