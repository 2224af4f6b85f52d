import { createHash } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { backfillQueueName } from '../../src/queue/names.js';
import { delivery, enterprise, PARCELS, rangedQueue } from '../helpers/ranged-queue.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const raw = new Redis(redis.url);
t.teardown(() => raw.disconnect());

const gapId = (from: number, to: number) => `gap-${createHash('sha1').update(`${PARCELS}\t${from}\t${to}`).digest('hex')}`;

t.test('out-of-order deliveries on one service end as plain events, with no gap job left and no duplicate', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  const ranges = [
    [10, 11],
    [12, 13],
    [14, 15],
    [11, 12],
    [13, 14],
  ] as const;
  for (const [from, to] of ranges)
    t.same((await q.eventQueue.enqueue(delivery(enterprise(from, to)))).duplicate, false, `(${from}, ${to}]`);
  t.same(await q.watermarks(), { [PARCELS]: '15' });
  t.equal(await q.featureJobs(), 5, 'a plain event each');
  t.same(await q.gapRanges(), [], 'no gap job left');
  t.same(await q.gaps.getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed'), {
    waiting: 0,
    delayed: 0,
    active: 0,
    completed: 0,
    failed: 0,
  });
  t.same(await raw.keys(`${q.prefix}:backfill:gap-*`), [], "no gap job's keys");
  t.same(await q.listedGaps(), {}, 'none listed');
  for (const [from, to] of ranges)
    t.same((await q.eventQueue.enqueue(delivery(enterprise(from, to, 1)))).duplicate, true, `(${from}, ${to}] again`);
  t.equal(await q.featureJobs(), 5);
  t.same(await q.dedupKeys(), [], 'and no dedup key');
});

t.test('a gap partly covered keeps only its uncovered parts, each a job of its own range', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  await q.eventQueue.enqueue(delivery(enterprise(10, 11)));
  await q.eventQueue.enqueue(delivery(enterprise(20, 21)));
  t.same(await q.gapRanges(), [['11', '20']]);
  t.same((await q.eventQueue.enqueue(delivery(enterprise(13, 15)))).duplicate, false, 'inside the gap: stored');
  t.same(await q.gapRanges(), [
    ['11', '13'],
    ['15', '20'],
  ]);
  t.same((await q.eventQueue.enqueue(delivery(enterprise(11, 13)))).duplicate, false, 'a part exactly');
  t.same((await q.eventQueue.enqueue(delivery(enterprise(19, 20)))).duplicate, false, 'the end of a part');
  t.same(await q.gapRanges(), [['15', '19']]);
  const [job] = await q.gaps.getJobs(['delayed']);
  t.equal(job?.id, gapId(15, 19), 'its id is that of its range');
  t.same(await q.listedGaps(), { [PARCELS]: '15\t19' });
  t.same((await q.eventQueue.enqueue(delivery(enterprise(14, 16)))).duplicate, true, 'a range partly handed over: a duplicate');
  t.same(await q.gapRanges(), [['15', '19']], 'the gap left as it was');
  t.equal(await q.featureJobs(), 5);
});

t.test('a range that ends past the watermark takes the generations it shares with a pending gap out of it', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  await q.eventQueue.enqueue(delivery(enterprise(10, 11)));
  await q.eventQueue.enqueue(delivery(enterprise(15, 16)));
  t.same((await q.eventQueue.enqueue(delivery(enterprise(14, 17)))).duplicate, false);
  t.same(await q.gapRanges(), [['11', '14']]);
  t.same(await q.watermarks(), { [PARCELS]: '17' });
});

t.test('a late delivery the server did not vouch for at its URL fills no gap', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  await q.eventQueue.enqueue(delivery(enterprise(10, 11)));
  await q.eventQueue.enqueue(delivery(enterprise(15, 16)));
  const elsewhere = 'https://gis.example.com/other/rest/services/Hosted/Parcels/FeatureServer';
  t.same((await q.eventQueue.enqueue(delivery(enterprise(12, 13, 13, elsewhere)))).duplicate, true, 'another URL: a duplicate');
  t.same(await q.gapRanges(), [['11', '15']]);
});

t.test('a gap a worker took already is filled by the backfill alone: a late delivery inside it is a duplicate', async (t) => {
  const q = await rangedQueue(t, redis.url, raw, 1000, { gapDelayMs: 0 });
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const taken: string[] = [];
  const worker = new Worker(
    backfillQueueName,
    async (job) => {
      taken.push(job.id!);
      await held;
    },
    { connection: { url: redis.url }, prefix: q.prefix },
  );
  t.teardown(() => worker.close());
  await q.eventQueue.enqueue(delivery(enterprise(10, 11)));
  await q.eventQueue.enqueue(delivery(enterprise(15, 16)));
  t.same(await q.gaps.getJobCounts('delayed'), { delayed: 0 }, 'with no delay, the gap waits for a worker at once');
  await waitFor('the worker to take the gap', async () => taken.length === 1);
  t.same(taken, [gapId(11, 15)]);
  t.same((await q.eventQueue.enqueue(delivery(enterprise(12, 13)))).duplicate, true, 'inside a gap being filled: a duplicate');
  release();
  await waitFor('the gap to complete', async () => (await q.gaps.getJobCounts('completed')).completed === 1);
  t.same(await q.gapRanges(), []);
  t.equal(await q.featureJobs(), 2);
});

t.test('a full list of gaps drops those no longer waiting for a worker; with none to drop, a new gap is not listed', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  const gone = Array.from({ length: 100 }, (_, n) => `${n}\t${n + 1}`).join('\n');
  await raw.hset(`${q.prefix}:gaps`, PARCELS, gone);
  await q.eventQueue.enqueue(delivery(enterprise(200, 201)));
  await q.eventQueue.enqueue(delivery(enterprise(202, 203)));
  t.same(await q.listedGaps(), { [PARCELS]: '201\t202' }, 'the gaps no job holds dropped');
  const waiting = Array.from({ length: 99 }, (_, n) => 203 + 2 * n);
  for (const from of waiting) await q.eventQueue.enqueue(delivery(enterprise(from + 1, from + 2)));
  t.equal((await q.listedGaps())[PARCELS]!.split('\n').length, 100, 'a hundred listed');
  await q.eventQueue.enqueue(delivery(enterprise(1000, 1000)));
  t.equal((await q.gapRanges()).length, 101, 'a job for every gap');
  t.notMatch((await q.listedGaps())[PARCELS], /\t1000$/, 'the last not listed');
});
