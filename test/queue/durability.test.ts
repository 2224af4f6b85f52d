import { Redis } from 'ioredis';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { planDurability, readPersistence, type RedisPersistence } from '../../src/queue/durability.js';
import { startServer } from '../../src/server.js';
import { sign } from '../../src/signature/sign.js';
import { countJobs, startReceiver, TEST_KEY } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const server = (version: string, appendOnly: boolean, appendFsync: string | undefined): RedisPersistence => ({
  version,
  appendOnly,
  appendFsync,
});

t.test('strict uses WAITAOF from Redis 7.2, else a server that fsyncs every write, else refuses with what to change', async (t) => {
  t.match(planDurability('strict', server('7.2.4', true, 'everysec')), { waitAof: true, description: /WAITAOF.*Redis 7\.2\.4/ });
  t.match(planDurability('strict', server('8.0.1', true, undefined)), { waitAof: true });
  t.match(planDurability('strict', server('7.0.15', true, 'always')), { waitAof: false, description: /fsyncs every write itself/ });
  for (const [persistence, found] of [
    [server('7.0.15', true, 'everysec'), 'appendfsync everysec'],
    [server('7.0.15', true, undefined), 'appendfsync unreadable'],
    [server('7.4.0', false, 'always'), 'AOF off'],
    [server('6.2.14', false, 'everysec'), 'AOF off'],
  ] as const) {
    t.throws(() => planDurability('strict', persistence), {
      code: 'GEOHOOK_ERR_DURABILITY',
      message: new RegExp(`^DURABILITY=strict cannot be kept on Redis ${persistence.version} \\(${found}`),
    });
  }
  t.match(planDurability('fast', server('7.0.15', false, 'everysec')), {
    waitAof: false,
    description: /AOF off: only its RDB snapshots survive a restart/,
  });
  t.match(planDurability('fast', server('7.0.15', true, 'everysec')), { waitAof: false, description: /AOF on, appendfsync everysec/ });
});

t.test('the persistence settings are read from the server itself', async (t) => {
  const redis = await startRedis(t, { appendOnly: true, appendFsync: 'always' });
  const connection = new Redis(redis.url);
  t.teardown(() => connection.disconnect());
  t.match(await readPersistence(connection), { version: /^\d+\.\d+\.\d+$/, appendOnly: true, appendFsync: 'always' });
});

t.test('DURABILITY takes fast or strict, fast by default', async (t) => {
  t.equal(loadConfig({}).durability, 'fast');
  t.equal(loadConfig({ DURABILITY: 'strict' }).durability, 'strict');
  t.throws(() => loadConfig({ DURABILITY: 'always' }), { code: 'GEOHOOK_ERR_CONFIG', message: /^DURABILITY: fast or strict/ });
});

const body = Buffer.from('{"serviceType":"GPServer","jobId":"d1","events":[{"eventType":"esriJobSucceeded"}]}');
const signed = { 'x-service': sign(TEST_KEY, body) };

t.test('strict on a server that fsyncs every write acknowledges and stores', async (t) => {
  const redis = await startRedis(t, { appendOnly: true, appendFsync: 'always' });
  const receiver = await startReceiver(t, redis, { DURABILITY: 'strict' });
  t.equal((await receiver.post(body, signed)).status, 202);
  t.equal(await countJobs(receiver.app), 1);
  t.equal((await fetch(`${receiver.url}/readyz`)).status, 200);
});

t.test('strict on a server that can keep it neither way refuses deliveries with 503 and says why in /readyz', async (t) => {
  const redis = await startRedis(t, { appendOnly: true, appendFsync: 'everysec' });
  const receiver = await startReceiver(t, redis, { DURABILITY: 'strict' });
  const response = await receiver.post(body, signed);
  t.equal(response.status, 503);
  t.ok(response.headers.get('retry-after'), 'with Retry-After');
  t.match(await response.json(), {
    code: 'GEOHOOK_ERR_QUEUE_UNAVAILABLE',
    message: /DURABILITY=strict cannot be kept on Redis .* \(appendfsync everysec\)/,
  });
  const ready = await fetch(`${receiver.url}/readyz`);
  t.equal(ready.status, 503);
  t.match(await ready.json(), { reason: /^DURABILITY=strict cannot be kept/ });
  t.equal(await countJobs(receiver.app), 0, 'nothing was stored');

  // The operator fixes the server; the next connection reads the settings again.
  const admin = new Redis(redis.url);
  t.teardown(() => admin.disconnect());
  await admin.config('SET', 'appendfsync', 'always');
  await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
  await waitFor('accepted again', async () => ((await receiver.post(body, signed)).status === 202 ? true : undefined));
  t.equal((await fetch(`${receiver.url}/readyz`)).status, 200);
});

t.test('geohook up with DURABILITY=strict runs its embedded Redis with appendfsync always', async (t) => {
  const config = loadConfig({ PORT: '0', DURABILITY: 'strict', HOOK_SECRETS: TEST_KEY, LOG_LEVEL: 'silent' });
  const running = await startServer(config, { embeddedRedisDir: t.testdir(), logger: pino({ level: 'silent' }) });
  t.teardown(() => running.close());
  const connection = new Redis(running.redisTarget.url!);
  t.teardown(() => connection.disconnect());
  t.same(await connection.config('GET', 'appendfsync'), ['appendfsync', 'always']);
});
