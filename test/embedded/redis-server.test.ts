import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { queueRedisTarget } from '../../src/cli/queue-redis-target.js';
import { loadConfig } from '../../src/config/load-config.js';
import { readRecordedRedisUrl } from '../../src/embedded/recorded-redis-url.js';
import { RedisServer, type RedisServerOptions } from '../../src/embedded/redis-server.js';
import { connectRedis } from '../../src/redis/connection.js';
import { startServer } from '../../src/server.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { TEST_KEY } from '../helpers/receiver.js';

// The embedded redis-server of `geohook up` holds the events and the generated signature keys: other local
// users may neither connect to it without its password nor read its files.

/** A RedisServer in `options.dir` (default: a fresh temporary directory), started, stopped (and a temporary directory removed) at teardown. */
async function started(t: Test, options: Partial<RedisServerOptions> = {}): Promise<RedisServer> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'geohook-redis-'));
  const server = new RedisServer({ ...options, dir });
  await server.start();
  t.teardown(async () => {
    await server.stop();
    if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
  });
  return server;
}

/** A client that does not give up, closed at teardown. */
function client(t: Test, url: string): Redis {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  t.teardown(() => redis.disconnect());
  return redis;
}

/** `process.umask` set to the usual 022 (files 0644, directories 0755) for the test. */
function usualUmask(t: Test): void {
  const umask = process.umask(0o022);
  t.teardown(() => process.umask(umask));
}

t.test('it requires a random password that its URL carries, its display URL and its command line do not', async (t) => {
  const server = await started(t);
  t.match(server.url, new RegExp(`^redis://:[A-Za-z0-9_-]{32}@127\\.0\\.0\\.1:${server.port}$`));
  t.equal(server.displayUrl, `redis://127.0.0.1:${server.port}`);
  const password = new URL(server.url).password;
  t.equal(await client(t, server.url).ping(), 'PONG', 'with the password');
  await t.rejects(client(t, server.displayUrl).ping(), /^NOAUTH/, 'without it');
  await t.rejects(client(t, `redis://:wrong@127.0.0.1:${server.port}`).ping(), /^WRONGPASS/, 'with another');
  const cmdline = `/proc/${server.pid}/cmdline`;
  if (existsSync(cmdline)) t.notOk(readFileSync(cmdline, 'utf8').includes(password), 'not on its command line');

  const other = await started(t);
  t.not(new URL(other.url).password, password, 'each server its own');
  await server.stop();
  await server.start();
  t.equal(new URL(server.url).password, password, 'kept across a restart');
  t.equal(await client(t, server.url).ping(), 'PONG');
});

t.test('with a configuration file it reads the password too; requirePassword false leaves it open', async (t) => {
  const dir = t.testdir({ 'redis.conf': 'maxclients 123\n' }); // once: testdir() starts the directory afresh
  const configured = await started(t, { configFile: join(dir, 'redis.conf') });
  await t.rejects(client(t, configured.displayUrl).ping(), /^NOAUTH/);
  t.same(await client(t, configured.url).config('GET', 'maxclients'), ['maxclients', '123'], 'the file was read');
  const open = await started(t, { requirePassword: false });
  t.equal(open.url, open.displayUrl);
  t.equal(await client(t, open.url).ping(), 'PONG');
});

t.test('its data directory is 0700, also when it existed, and the URL it records there is 0600', async (t) => {
  usualUmask(t);
  const root = t.testdir();
  const dir = join(root, '.geohook', 'redis');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  writeFileSync(join(dir, 'url'), 'redis://127.0.0.1:1\n', { mode: 0o644 }); // a record of an earlier version
  const server = await started(t, { dir, appendOnly: true });
  t.equal(statSync(dir).mode & 0o777, 0o700, 'the directory');
  t.equal(statSync(join(dir, 'url')).mode & 0o777, 0o600, 'the recorded URL');
  t.equal(readRecordedRedisUrl(dir), server.url, 'with the password');
  await started(t, { dir: join(root, 'new', 'redis') });
  t.equal(statSync(join(root, 'new')).mode & 0o777, 0o700, 'a parent it creates too');
  t.equal(statSync(join(root, 'new', 'redis')).mode & 0o777, 0o700);
});

t.test('geohook serve starts it with a password: the receiver and the CLI find it, the log shows no password', async (t) => {
  const dir = join(t.testdir(), 'redis');
  const { logger, lines } = capturingLogger('info');
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', HOOK_SECRETS: TEST_KEY });
  const running = await startServer(config, { embeddedRedisDir: dir, logger });
  t.teardown(() => running.close());
  const { url } = running.redis!;
  const password = new URL(url).password;
  t.ok(password.length >= 32, 'a password');
  await t.resolves(running.app.eventQueue.ready(), 'the receiver stores events there');

  const target = queueRedisTarget(loadConfig({}), dir); // geohook consume and geohook events without REDIS_URL
  t.equal(target.url, url);
  const connection = connectRedis(target, { lazyConnect: true });
  t.teardown(() => connection.disconnect());
  t.equal(await connection.ping(), 'PONG');

  const log = lines.join('\n');
  t.match(log, /"redisUrl":"redis:\/\/:\[redacted\]@127\.0\.0\.1:\d+","msg":"embedded redis-server started"/);
  t.notOk(log.includes(password), 'the password is in no log line');
});
