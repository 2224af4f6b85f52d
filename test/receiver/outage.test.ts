import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { buildReceiver } from '../../src/receiver/build-receiver.js';
import { generatedKeysKey } from '../../src/redis/keys.js';
import { sign } from '../../src/signature/sign.js';
import { eventOf } from '../helpers/envelope.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { configFile, startReceiver, TEST_KEY, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

t.test('while Redis is down a delivery gets 503 with Retry-After while it is down, and is stored once Redis is back', async (t) => {
  const redis = await startRedis(t);
  const receiver = await startReceiver(t, redis);
  const before = Buffer.from('{"n":"before"}');
  t.equal((await receiver.post(before, { 'x-service': sign(TEST_KEY, before) })).status, 202);

  await redis.stop();
  const during = Buffer.from('{"n":"during"}');
  const refused = await receiver.post(during, { 'x-service': sign(TEST_KEY, during) });
  t.equal(refused.status, 503);
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After is set');
  t.match(await refused.json(), { statusCode: 503, code: 'GEOHOOK_ERR_QUEUE_UNAVAILABLE' });

  const notReady = await fetch(`${receiver.url}/readyz`);
  t.equal(notReady.status, 503, '/readyz reports the outage');
  t.equal((await fetch(`${receiver.url}/healthz`)).status, 200, '/healthz still answers');

  await redis.start();
  await waitFor(
    'the retried delivery to be accepted after Redis came back',
    async () => (await receiver.post(during, { 'x-service': sign(TEST_KEY, during) })).status === 202,
    {
      intervalMs: 50,
    },
  );
  t.equal((await fetch(`${receiver.url}/readyz`)).status, 200);
  const jobs = await receiver.app.eventQueue.queue('unknown-events').getJobs(['wait']);
  t.same(
    jobs.map((job) => eventOf(job).payload),
    [{ n: 'during' }],
    'the retried event is stored (the restarted Redis kept nothing)',
  );
});

/**
 * Checks what a receiver logged while it refused `refused` deliveries for want of Redis: nothing at error level, one
 * warning without a stack for them all, and the request line of each.
 */
function checkRefusalLog(t: Test, lines: readonly string[], refused: number): void {
  const logged = lines.map((line) => JSON.parse(line) as { level: number; msg: string; [field: string]: unknown });
  t.same(
    logged.filter((entry) => entry.level >= 50),
    [],
    'nothing at error level',
  );
  const refusals = logged.filter((entry) => entry.code === 'GEOHOOK_ERR_QUEUE_UNAVAILABLE');
  t.equal(refusals.length, 1, 'the refusals are said once');
  t.match(refusals[0], { level: 40, msg: /^requests refused with 503/, reason: String });
  t.notOk(JSON.stringify(refusals).includes('stack'), 'without a stack');
  const requestLines = logged.filter((entry) => (entry.res as { statusCode?: number } | undefined)?.statusCode === 503);
  t.equal(requestLines.length, refused, 'each has its request line');
}

t.test('deliveries refused during an outage are one warning without a stack, not an error each', async (t) => {
  const redis = await startRedis(t);
  const { logger: loggerInstance, lines } = capturingLogger('info');
  const receiver = await startReceiver(t, redis, {}, { loggerInstance });
  const deliver = (n: number): Promise<Response> => {
    const body = Buffer.from(`{"n":${n}}`);
    return receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  };

  await redis.stop();
  const outageStart = lines.length;
  for (let n = 0; n < 50; n += 1) {
    const refused = await deliver(n);
    t.equal(refused.status, 503, `delivery ${n} is refused`);
    t.ok(Number(refused.headers.get('retry-after')) > 0, `delivery ${n} carries Retry-After`);
  }
  checkRefusalLog(t, lines.slice(outageStart), 50);

  // A Redis back before ioredis's first retry failed would make no outage of it, and no line that it is back.
  await waitFor('the outage to be logged', () => lines.some((line) => line.includes('Redis connection lost')));
  await redis.start();
  await waitFor('deliveries to be accepted again', async () => (await deliver(0)).status === 202, { intervalMs: 50 });
  const restored = lines
    .map((line) => JSON.parse(line) as { msg: string; refused?: number })
    .find(({ msg }) => msg === 'Redis connection restored');
  t.ok((restored?.refused ?? 0) >= 50, `the line that says Redis is back counts the refusals (${restored?.refused})`);
});

t.test('deliveries refused before Redis first answers are one warning without a stack, not an error each', async (t) => {
  const redis = await startRedis(t);
  await redis.stop();
  const { logger: loggerInstance, lines } = capturingLogger('info');
  const app = await buildReceiver({
    config: loadConfig({ REDIS_URL: redis.url, HOOK_SECRETS: TEST_KEY, GEOHOOK_PREFIX: 'down' }),
    loggerInstance,
  });
  t.teardown(() => app.close());
  for (let n = 0; n < 10; n += 1) {
    const body = `{"n":${n}}`;
    const refused = await app.inject({
      method: 'POST',
      url: '/webhooks/default',
      headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
      body,
    });
    t.equal(refused.statusCode, 503, `delivery ${n} is refused`);
  }
  checkRefusalLog(t, lines, 10);
});

t.test('a receiver started while Redis is down answers 503 until Redis comes up', async (t) => {
  const redis = await startRedis(t);
  await redis.stop();
  const app = await buildReceiver({
    config: loadConfig({ REDIS_URL: redis.url, HOOK_SECRETS: TEST_KEY, LOG_LEVEL: 'silent', GEOHOOK_PREFIX: 'down' }),
  });
  t.teardown(() => app.close());
  const body = '{"n":"early"}';
  const early = await app.inject({
    method: 'POST',
    url: '/webhooks/default',
    headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
    body,
  });
  t.equal(early.statusCode, 503);
  await redis.start();
  await app.eventQueue.ready();
  const late = await app.inject({
    method: 'POST',
    url: '/webhooks/default',
    headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
    body,
  });
  t.equal(late.statusCode, 202);
});

t.test('a receiver started while Redis is down loads the generated signature keys once Redis comes up', async (t) => {
  const redis = await startRedis(t, { appendOnly: true });
  const prefix = uniquePrefix();
  const generated = 'a-key-self-registration-generated';
  const writer = new Redis(redis.url);
  await writer.rpush(generatedKeysKey(prefix, 'default'), generated);
  writer.disconnect();
  await redis.stop();
  const app = await buildReceiver({
    // No reload before the test ends: the keys come with Redis.
    config: loadConfig({
      REDIS_URL: redis.url,
      LOG_LEVEL: 'silent',
      GEOHOOK_PREFIX: prefix,
      GEOHOOK_CONFIG: configFile(t, { keyReloadSeconds: 3600 }),
    }),
  });
  t.teardown(() => app.close());
  await app.ready();
  await redis.start();
  const body = '{"n":"signed with the generated key"}';
  const deliver = () =>
    app.inject({
      method: 'POST',
      url: '/webhooks/default',
      headers: { 'content-type': 'application/json', 'x-service': sign(generated, body) },
      body,
    });
  await waitFor('the delivery signed with the generated key to be accepted', async () => (await deliver()).statusCode === 202, {
    intervalMs: 50,
  });
});

t.test('when Redis stalls the delivery gets 503 after the enqueue timeout instead of hanging', async (t) => {
  const redis = await startRedis(t);
  const { configFile } = await import('../helpers/receiver.js');
  const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, { enqueueTimeoutMs: 300 }) });
  const body = Buffer.from('{"n":"stalled"}');
  process.kill(redis.pid!, 'SIGSTOP');
  t.teardown(() => {
    process.kill(redis.pid!, 'SIGCONT');
  });
  const started = Date.now();
  const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  const elapsedMs = Date.now() - started;
  process.kill(redis.pid!, 'SIGCONT');
  t.equal(response.status, 503);
  t.match(await response.json(), { code: 'GEOHOOK_ERR_QUEUE_UNAVAILABLE' });
  // Answered while Redis is still stopped (a hang would end the test), and not before the enqueue timeout ran out.
  t.ok(elapsedMs >= 300, `answered after ${elapsedMs} ms, the enqueue timeout being 300 ms`);
  const retried = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  t.equal(retried.status, 202, 'the sender retry is acknowledged');
  t.equal((await receiver.app.eventQueue.queue('unknown-events').getJobs(['wait'])).length, 1, 'stored once');
});

t.test('a Redis that refuses the password once reconnected: /readyz and the 503s name it and the fix, never the password', async (t) => {
  const redis = await startRedis(t, { requirePassword: true });
  const receiver = await startReceiver(t, redis);
  const password = new URL(redis.url).password;
  const admin = new Redis(redis.url);
  t.teardown(() => admin.disconnect());
  await admin.config('SET', 'requirepass', 'another-password');
  await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  const refused = `Redis at redis://127.0.0.1:${new URL(redis.url).port} refused the connection: the password is wrong (WRONGPASS). Give its password in REDIS_URL`;
  let readyz = '';
  await waitFor('/readyz to name the refused password', async () => {
    const answer = await fetch(`${receiver.url}/readyz`);
    readyz = await answer.text();
    return answer.status === 503 && readyz.includes(refused);
  });
  const body = Buffer.from('{"n":"refused"}');
  const delivery = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  t.equal(delivery.status, 503, 'a delivery is refused with 503');
  const answer = await delivery.text();
  t.ok(answer.includes(refused), 'its answer says why');
  t.notOk(`${readyz}${answer}`.includes(password), 'never the password');
});
