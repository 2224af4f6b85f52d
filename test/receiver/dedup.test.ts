import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { dedupDigest } from '../../src/queue/job-script.js';
import { dedupKey } from '../../src/redis/keys.js';
import { sign } from '../../src/signature/sign.js';
import { fixture } from '../helpers/paths.js';
import { configFile, countJobs, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const body = fixture('enterprise-gp-succeeded.json');
const signed = { 'x-service': sign(TEST_KEY, body) };

t.test('a repeated delivery is acknowledged as a duplicate and enqueued once', async (t) => {
  const receiver = await startReceiver(t, redis);
  const first = (await (await receiver.post(body, signed)).json()) as { id: string; duplicate: boolean };
  const second = await receiver.post(body, signed);
  t.equal(second.status, 202);
  t.same(await second.json(), { status: 'accepted', id: first.id, duplicate: true });
  t.equal(first.duplicate, false);
  t.equal(await countJobs(receiver.app), 1);
});

t.test('the same bytes on another hook are not a duplicate of the first hook', async (t) => {
  const receiver = await startReceiver(t, redis, {
    GEOHOOK_CONFIG: configFile(t, { hooks: [{ name: 'other', secrets: [TEST_KEY] }] }),
  });
  t.match(await (await receiver.post(body, signed, 'default')).json(), { duplicate: false });
  t.match(await (await receiver.post(body, signed, 'other')).json(), { duplicate: false });
  t.match(await (await receiver.post(body, signed, 'other')).json(), { duplicate: true });
  const jobs = await receiver.app.eventQueue.queue('gp-events').getJobs(['wait']);
  t.same(jobs.map((job) => job.data.hook).sort(), ['default', 'other'], 'each hook got its event once');
});

t.test('a repeat stays a duplicate after the completed job was removed', async (t) => {
  const receiver = await startReceiver(t, redis, {
    GEOHOOK_CONFIG: configFile(t, { completedJobs: { ageSeconds: 0, count: 0 } }),
  });
  const { id } = (await (await receiver.post(body, signed)).json()) as { id: string };
  const queue = receiver.app.eventQueue.queue('gp-events');

  const worker = new Worker('gp-events', async () => 'done', {
    connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null },
    prefix: receiver.prefix,
  });
  t.teardown(() => worker.close());
  await new Promise<void>((resolve) => worker.once('completed', () => resolve()));
  await waitFor('the completed job to be removed', async () => (await queue.getJob(id)) === undefined);
  const client = new Redis(redis.url);
  t.teardown(() => client.quit());
  const key = Buffer.concat([Buffer.from(dedupKey(receiver.prefix, '')), dedupDigest('default', id)]);
  t.equal(await client.get(key), '1', 'what is left is the dedup key, a marker with the smallest value');
  t.ok((await client.pttl(key)) > 86_000_000, 'kept for the 24-h window');

  const again = await receiver.post(body, signed);
  t.same(await again.json(), { status: 'accepted', id, duplicate: true });
  t.equal(await countJobs(receiver.app), 0, 'it was not enqueued again');
});

t.test('a repeat after the retention window is enqueued again, also while the first job is kept', async (t) => {
  const receiver = await startReceiver(t, redis, {
    GEOHOOK_CONFIG: configFile(t, { dedupRetentionSeconds: 1 }),
  });
  const { id } = (await (await receiver.post(body, signed)).json()) as { id: string };
  await new Promise((resolve) => setTimeout(resolve, 1100)); // the retention window passes: what is tested
  t.match(await (await receiver.post(body, signed)).json(), { id, duplicate: false });
  const jobs = await receiver.app.eventQueue.queue('gp-events').getJobs(['wait']);
  t.equal(jobs.length, 2, 'enqueued again');
  t.ok(
    jobs.every((job) => job.data.id === id),
    'both jobs carry the event id',
  );
});
