import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { startServer } from '../../src/server.js';
import { TEST_KEY } from '../helpers/receiver.js';

const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', HOOK_SECRETS: TEST_KEY, LOG_LEVEL: 'silent' });
const start = (dir: string) => startServer(config, { embeddedRedisDir: dir, logger: pino({ level: 'silent' }) });

t.test('a second geohook up on the same data directory is refused while the first runs, not given a second redis-server', async (t) => {
  const dir = t.testdir();
  const first = await start(dir);
  await t.rejects(start(dir), { code: 'GEOHOOK_ERR_REDIS_SERVER', message: new RegExp(`another geohook \\(pid ${process.pid}\\) runs the embedded Redis of ${dir}`) });
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
