import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { keepTempDir, makeTempDir, reapLeftovers, removeTempDir } from '../../harness/cleanup.js';
import { isRunning, RedisServer } from '../../src/embedded/redis-server.js';

/** A directory as a bench or fault run leaves it when SIGKILLed: owner gone, its redis-server still up. */
async function killedRunDir(t: Test): Promise<{ dir: string; redis: RedisServer }> {
  const dir = mkdtempSync(join(tmpdir(), 'geohook-tool-test-'));
  writeFileSync(join(dir, 'owner.pid'), `${spawnSync(process.execPath, ['-e', '']).pid!}\n`);
  mkdirSync(join(dir, 'redis'));
  const redis = new RedisServer({ dir: join(dir, 'redis') });
  await redis.start();
  t.teardown(() => redis.kill());
  return { dir, redis };
}

t.test('the next bench or fault run stops the redis-servers a killed run left and removes its directories', async (t) => {
  const { dir, redis } = await killedRunDir(t);
  const lines: string[] = [];
  await reapLeftovers((line) => lines.push(line));
  t.notOk(isRunning(redis.pid!), 'its redis-server was shut down');
  t.notOk(existsSync(dir), 'its directory was removed');
  t.match(lines.join('\n'), `stopped a redis-server a killed run left in ${join(dir, 'redis')}`);
});

t.test('directories of a run still going, and those kept on purpose, are left alone', async (t) => {
  const mine = makeTempDir('test');
  t.teardown(() => removeTempDir(mine));
  const kept = await killedRunDir(t);
  keepTempDir(kept.dir);
  t.teardown(() => removeTempDir(kept.dir));
  await reapLeftovers(() => undefined);
  t.ok(existsSync(join(mine, 'owner.pid')), 'a live run keeps its directory');
  t.ok(existsSync(kept.dir), 'a kept directory stays');
});
