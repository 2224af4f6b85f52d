import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { isRunning, RedisServer } from '../../src/embedded/redis-server.js';
import { startServer } from '../../src/server.js';
import { TEST_KEY } from '../helpers/receiver.js';

const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', HOOK_SECRETS: TEST_KEY, LOG_LEVEL: 'silent' });
const start = (dir: string) => startServer(config, { embeddedRedisDir: dir, logger: pino({ level: 'silent' }) });

t.test('a second geohook up on the same data directory is refused while the first runs, not given a second redis-server', async (t) => {
  const dir = t.testdir();
  const first = await start(dir);
  await t.rejects(start(dir), {
    code: 'GEOHOOK_ERR_REDIS_SERVER',
    message: new RegExp(`another geohook \\(pid ${process.pid}\\) runs the embedded Redis of ${dir}`),
  });
  t.ok(existsSync(join(dir, 'owner.pid')), 'the first still holds the directory');
  await first.close();
  t.notOk(existsSync(join(dir, 'owner.pid')), 'released on close');
  const again = await start(dir);
  await again.close();
});

t.test('a lock left by a process that died is taken over', async (t) => {
  const dir = t.testdir();
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  writeFileSync(join(dir, 'owner.pid'), `${dead}\n`);
  const running = await start(dir);
  t.teardown(() => running.close());
  t.ok(running.redis, 'the embedded redis-server runs');
});

t.test('a redis-server a killed geohook left running is shut down (AOF flushed) before the next one starts', async (t) => {
  const dir = t.testdir();
  const leftover = new RedisServer({ dir, appendOnly: true });
  await leftover.start();
  t.teardown(() => leftover.kill());
  const client = new Redis(leftover.url);
  await client.set('kept', 'yes');
  client.disconnect();
  writeFileSync(join(dir, 'owner.pid'), `${spawnSync(process.execPath, ['-e', '']).pid!}\n`);

  const running = await start(dir);
  t.teardown(() => running.close());
  t.notOk(isRunning(leftover.pid!), 'the leftover server is gone');
  const fresh = new Redis(running.redisTarget.url!);
  t.teardown(() => fresh.disconnect());
  t.equal(await fresh.get('kept'), 'yes', 'and what it held was reloaded from the AOF');
});

t.test('stopLeftover leaves alone a server that answers from another directory, and a stale record', async (t) => {
  const other = new RedisServer({ dir: t.testdir() });
  await other.start();
  t.teardown(() => other.stop());
  const dir = t.testdir();
  writeFileSync(join(dir, 'url'), `${other.url}\n`);
  t.equal(await RedisServer.stopLeftover(dir), false, 'not its directory');
  t.ok(isRunning(other.pid!), 'still running');
  writeFileSync(join(dir, 'url'), 'redis://127.0.0.1:1\n');
  t.equal(await RedisServer.stopLeftover(dir), false, 'nothing answers');
  t.notOk(existsSync(join(dir, 'url')), 'the stale record is removed');
});
