import t from 'tap';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sign } from '../../src/signature/sign.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { startRedis } from '../helpers/redis.js';
import { runCli, startCli } from '../helpers/cli.js';
import { uniquePrefix, TEST_KEY } from '../helpers/receiver.js';

t.test('an invalid variable stops geohook serve with one line naming it', async (t) => {
  const result = await runCli(['serve'], { env: { PORT: 'eighty' } });
  t.equal(result.code, 1);
  t.equal(result.stderr, 'geohook: PORT: a port number from 0 to 65535\n');
});

t.test('a flag wins over its environment variable', async (t) => {
  const result = await runCli(['serve', '--port', '99999'], { env: { PORT: '8080' } });
  t.equal(result.code, 1);
  t.equal(result.stderr, 'geohook: PORT: a port number from 0 to 65535\n');
});

t.test('geohook serve receives, then drains and exits 0 on SIGTERM', async (t) => {
  const redis = await startRedis(t);
  const port = await findFreePort();
  const { child, output } = await startCli(
    ['serve', '--port', String(port), '--host', '127.0.0.1'],
    { REDIS_URL: redis.url, HOOK_SECRETS: TEST_KEY, GEOHOOK_PREFIX: uniquePrefix() },
    /Server listening/,
  );
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const body = '{"serviceType":"GPServer","jobId":"cli","events":[{"eventType":"esriJobSucceeded"}]}';
  const response = await fetch(`http://127.0.0.1:${port}/webhooks/default`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
    body,
  });
  t.equal(response.status, 202);
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 0);
  t.match(output(), /"signal":"SIGTERM","msg":"shutting down"/);
  t.match(output(), /"msg":"geohook stopped"/);
  t.notOk(output().includes(TEST_KEY), 'the key is not logged');
});

t.test('geohook up starts an embedded redis-server with AOF under ./.geohook and stops it on SIGINT', async (t) => {
  const dir = t.testdir();
  const port = await findFreePort();
  const { child, output } = await startCli(['up', '--port', String(port), '--host', '127.0.0.1'], { HOOK_SECRETS: TEST_KEY }, /Server listening/, dir);
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  t.ok(existsSync(join(dir, '.geohook/redis/appendonlydir')), 'AOF files are under ./.geohook/redis');
  const match = /"redisUrl":"redis:\/\/127\.0\.0\.1:(\d+)"/.exec(output());
  t.ok(match, 'the embedded Redis URL is logged');
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
  t.equal(ready.status, 200);
  child.kill('SIGINT');
  const [code] = await once(child, 'exit');
  t.equal(code, 0);
  const { Redis } = await import('ioredis');
  const probe = new Redis(Number(match![1]), '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  await t.rejects(probe.connect(), 'the embedded redis-server is stopped');
  probe.disconnect();
});
