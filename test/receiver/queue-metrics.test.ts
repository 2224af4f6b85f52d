import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { sign } from '../../src/signature/sign.js';
import { configFile, startReceiver, TEST_KEY, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const body = Buffer.from('{"serviceType":"GPServer","jobId":"q1","events":[{"eventType":"esriJobFailed"}]}');

async function metrics(t: Test, receiver: TestReceiver): Promise<string> {
  const response = await fetch(`${receiver.url}/metrics`);
  t.equal(response.status, 200);
  return response.text();
}

/** A receiver whose jobs get one attempt, with one GP delivery accepted. */
async function receiverWithOneEvent(t: Test, redisUrl: Parameters<typeof startReceiver>[1]): Promise<TestReceiver> {
  const receiver = await startReceiver(t, redisUrl, { GEOHOOK_CONFIG: configFile(t, { retry: { attempts: 1 } }) });
  t.equal((await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).status, 202);
  return receiver;
}

t.test('/metrics shows jobs per queue and state, the failed ones (dead letters) included', async (t) => {
  const redis = await startRedis(t);
  const receiver = await receiverWithOneEvent(t, redis);
  const before = await metrics(t, receiver);
  t.match(before, /^geohook_queue_jobs\{queue="gp-events",state="waiting"\} 1$/m);
  t.match(before, /^geohook_queue_jobs\{queue="gp-events",state="failed"\} 0$/m);
  t.match(before, /^geohook_queue_depth\{queue="gp-events"\} 1$/m);

  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const worker = new Worker('gp-events', async () => Promise.reject(new Error('handler down')), { connection, prefix: receiver.prefix });
  t.teardown(async () => {
    await worker.close();
    connection.disconnect();
  });
  await waitFor('the failure', async () => (await receiver.app.eventQueue.queue('gp-events').getFailedCount()) === 1);

  const after = await metrics(t, receiver);
  t.match(after, /^geohook_queue_jobs\{queue="gp-events",state="failed"\} 1$/m);
  t.match(after, /^geohook_queue_jobs\{queue="gp-events",state="waiting"\} 0$/m);
  t.match(after, /^geohook_queue_depth\{queue="gp-events"\} 0$/m);
  for (const state of ['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed', 'waiting-children']) {
    t.match(after, new RegExp(`^geohook_queue_jobs\\{queue="feature-events",state="${state}"\\} 0$`, 'm'), `feature-events ${state}`);
  }
});

t.test('/metrics still answers, with the last counts, while Redis is down', async (t) => {
  const redis = await startRedis(t);
  const receiver = await receiverWithOneEvent(t, redis);
  t.match(await metrics(t, receiver), /^geohook_queue_jobs\{queue="gp-events",state="waiting"\} 1$/m);
  // Redis stays down: a scrape that waited for it would not answer before tap's limit.
  await redis.stop();
  const during = await metrics(t, receiver);
  t.match(during, /^geohook_queue_jobs\{queue="gp-events",state="waiting"\} 1$/m);
  t.match(during, /^geohook_queue_depth\{queue="gp-events"\} 1$/m);
});
