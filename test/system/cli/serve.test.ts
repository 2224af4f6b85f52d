import { once } from 'node:events';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import t from 'tap';
import { subscriptionExists } from '../../../src/consumers/subscribe.js';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { sign } from '../../../src/signature/sign.js';
import { runCli, startCli } from '../../helpers/cli.js';
import { uniquePrefix, TEST_KEY } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

t.test('an invalid variable stops geohook serve with one line naming it', async (t) => {
  const result = await runCli(['serve'], { env: { PORT: 'eighty' } });
  t.equal(result.code, 1);
  t.equal(result.stderr, 'geohook: PORT: a port number from 0 to 65535 (got "eighty")\n');
});

t.test('a flag wins over its environment variable', async (t) => {
  const result = await runCli(['serve', '--port', '99999'], { env: { PORT: '8080' } });
  t.equal(result.code, 1);
  t.equal(result.stderr, 'geohook: PORT: a port number from 0 to 65535 (got "99999")\n');
});

t.test('a port in use stops geohook serve and geohook up with one line naming the address and the setting that moves it', async (t) => {
  const redis = await startRedis(t);
  const busy = createServer();
  busy.listen(0, '127.0.0.1');
  await once(busy, 'listening');
  t.teardown(() => busy.close());
  const port = String((busy.address() as AddressInfo).port);

  const serve = await runCli(['serve', '--port', port, '--host', '127.0.0.1'], { env: { REDIS_URL: redis.url } });
  t.equal(serve.code, 1);
  t.match(
    serve.stderr,
    new RegExp(
      `(?:^|\\n)geohook: the receiver cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .*; PORT \\(or --port\\) moves it\\n$`,
    ),
  );
  t.notMatch(serve.stderr, /EADDRINUSE|at .*\.js:\d+/, 'no stack');

  // Issue 53: up's emulator port has its flag.
  const up = await runCli(['up', '--port', String(await findFreePort()), '--emulator-port', port], { env: { REDIS_URL: redis.url } });
  t.equal(up.code, 1);
  t.match(
    up.stderr,
    new RegExp(
      `(?:^|\\n)geohook: the emulator cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use .*; EMULATOR_PORT \\(or --emulator-port\\) moves it\\n$`,
    ),
  );
  t.notMatch(up.stderr, /EADDRINUSE|at .*\.js:\d+/, 'no stack');
});

t.test('geohook up says every port in use at once, each with the flag that moves it (issue 53)', async (t) => {
  const redis = await startRedis(t);
  const busyPort = async (): Promise<string> => {
    const busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    t.teardown(() => busy.close());
    return String((busy.address() as AddressInfo).port);
  };
  const [port, emulatorPort] = [await busyPort(), await busyPort()];
  const up = await runCli(['up', '--port', port, '--emulator-port', emulatorPort], { env: { REDIS_URL: redis.url } });
  t.equal(up.code, 1);
  t.match(
    up.stderr,
    new RegExp(
      `(?:^|\\n)geohook: 2 ports are in use \\(by other programs, or another geohook\\): ` +
        `the receiver on 127\\.0\\.0\\.1:${port} \\(--port or PORT moves it\\), ` +
        `the emulator on 127\\.0\\.0\\.1:${emulatorPort} \\(--emulator-port or EMULATOR_PORT moves it\\)\\n$`,
    ),
  );
  t.notMatch(up.stderr, /EADDRINUSE|at .*\.js:\d+/, 'no stack');
});

t.test('an admin API geohook serve cannot reach is said once, in one line with the value and the fix; its retries in brief', async (t) => {
  const redis = await startRedis(t);
  const dir = t.testdir({ 'geohook.json': JSON.stringify({ registration: { retryInitialSeconds: 0.05, retryMaxSeconds: 0.1 } }) });
  const { child, output } = await startCli(
    ['serve', '--port', String(await findFreePort()), '--host', '127.0.0.1'],
    {
      REDIS_URL: redis.url,
      ADMIN_URL: `http://127.0.0.1:${await findFreePort()}/arcgis/admin`,
      ADMIN_USERNAME: 'admin',
      ADMIN_PASSWORD: 'admin.pass',
      REGISTER: 'Tools/Buffer.GPServer,Hosted/Parcels.FeatureServer',
      GEOHOOK_CONFIG: join(dir, 'geohook.json'),
    },
    /registration still failing, same cause.*\n(?:.*\n)*.*registration still failing, same cause/,
  );
  t.teardown(() => child.kill('SIGKILL'));
  const lines = output().split('\n');
  const causes = lines.filter((line) => line.includes('cannot reach the admin API at http://127.0.0.1:'));
  t.equal(causes.length, 1, 'the cause is said once, for both services');
  t.match(causes[0], /ECONNREFUSED.*check ADMIN_URL and that the server is up/);
  t.notMatch(output(), /"stack"|\bat .*\.js:\d+/, 'no stack trace');
  t.ok(
    lines.filter((line) => line.includes('same cause')).every((line) => line.length < 300),
    'each retry in brief',
  );
});

t.test('geohook serve receives, then drains and exits 0 on SIGTERM, having loaded no client it is not configured for', async (t) => {
  const redis = await startRedis(t);
  const port = await findFreePort();
  // What Node.js loaded by the time the process exits: every CommonJS module, imported or required.
  const dir = t.testdir({
    'loaded.cjs': `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(t.testdirName, 'loaded.json'))}, JSON.stringify(Object.keys(require.cache))));`,
  });
  const { child, output } = await startCli(
    ['serve', '--port', String(port), '--host', '127.0.0.1'],
    { REDIS_URL: redis.url, HOOK_SECRETS: TEST_KEY, GEOHOOK_PREFIX: uniquePrefix() },
    /Server listening/,
    { nodeArgs: ['--require', join(dir, 'loaded.cjs')] },
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
  // No mirror, stream or relay route here: their clients are loaded at first use only (docs/performance.md#start-up).
  const packages = new Set((JSON.parse(readFileSync(join(dir, 'loaded.json'), 'utf8')) as string[]).map(packageOf));
  t.ok(packages.has('bullmq'), 'what it uses is listed');
  t.same(
    ['pg', 'pg-copy-streams', 'nats', 'amqplib', 'undici', 'pino-pretty'].filter((name) => packages.has(name)),
    [],
    'no client of a mirror, a stream or a relay route, nor pino-pretty',
  );
});

/** The package a module of node_modules belongs to (`@scope/name` or `name`). */
function packageOf(file: string): string | undefined {
  const path = file.split('/node_modules/').at(-1)!;
  if (path === file) return undefined;
  const [first, second] = path.split('/');
  return first!.startsWith('@') ? `${first}/${second}` : first;
}

t.test(
  'geohook serve started before its Redis says so once and waits for it: /readyz 503 naming Redis, then ready and receiving',
  async (t) => {
    const redis = await startRedis(t, { requirePassword: true });
    await redis.stop();
    const port = await findFreePort();
    const prefix = uniquePrefix();
    const dir = t.testdir({ 'geohook.json': JSON.stringify({ subscriptions: [{ name: 'permits', types: ['change.*'] }] }) });
    const { child, output } = await startCli(
      ['serve', '--port', String(port), '--host', '127.0.0.1'],
      { REDIS_URL: redis.url, HOOK_SECRETS: TEST_KEY, GEOHOOK_PREFIX: prefix, GEOHOOK_CONFIG: join(dir, 'geohook.json') },
      /Server listening/,
    );
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    const password = new URL(redis.url).password;
    const waiting = output()
      .split('\n')
      .filter((line) => line.includes('Redis not connected yet'));
    t.equal(waiting.length, 1, 'said once');
    t.match(waiting[0], `"redis":"redis://127.0.0.1:${redis.port}"`, 'naming the Redis');
    t.match(waiting[0], /check REDIS_URL and that Redis is up/, 'and the fix');
    t.notOk(output().includes(password), 'never its password');
    t.notMatch(output(), /"stack"|\bat .*\.js:\d+/, 'no stack trace');

    const notReady = await fetch(`http://127.0.0.1:${port}/readyz`);
    t.equal(notReady.status, 503);
    t.match(await notReady.json(), { status: 'not ready', reason: /^Redis / });
    t.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, '/healthz answers');
    const body = '{"serviceType":"GPServer","jobId":"late-redis","events":[{"eventType":"esriJobSucceeded"}]}';
    const deliver = () =>
      fetch(`http://127.0.0.1:${port}/webhooks/default`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
        body,
      });
    const refused = await deliver();
    t.equal(refused.status, 503, 'a delivery is refused for now');
    t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After');

    await redis.start();
    await waitFor('/readyz 200 once Redis answers', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, {
      intervalMs: 100,
    });
    t.equal((await deliver()).status, 202, 'a delivery is accepted');
    const client = new Redis(redis.url);
    t.teardown(() => client.disconnect());
    t.ok(await subscriptionExists(client, prefix, 'permits'), 'the subscription of GEOHOOK_CONFIG was made once Redis answered');
  },
);

t.test('a Redis that refuses the password stops geohook serve with one line naming it and the fix', async (t) => {
  const redis = await startRedis(t, { requirePassword: true });
  const serve = await runCli(['serve', '--port', String(await findFreePort()), '--host', '127.0.0.1'], {
    env: { REDIS_URL: `redis://:not-its-password@127.0.0.1:${redis.port}` },
    timeoutMs: 60_000,
  });
  t.equal(serve.code, 1);
  t.match(
    serve.stderr,
    new RegExp(
      `(?:^|\\n)geohook: Redis at redis://127\\.0\\.0\\.1:${redis.port} refused the connection: the password is wrong \\(WRONGPASS\\)\\. Give its password in REDIS_URL .*\\n$`,
    ),
  );
  t.notOk(`${serve.stdout}${serve.stderr}`.includes('not-its-password'), 'never the password');
  t.notMatch(`${serve.stdout}${serve.stderr}`, /"stack"|\bat .*\.js:\d+/, 'no stack trace');
});

t.test(
  'geohook up runs everything: embedded Redis with AOF, the emulator, the registered receiver and a printing consumer; Ctrl-C stops it all',
  async (t) => {
    const dir = t.testdir();
    const port = await findFreePort();
    const emulatorPort = await findFreePort();
    const { child, output } = await startCli(
      ['up', '--port', String(port), '--host', '127.0.0.1'],
      { EMULATOR_PORT: String(emulatorPort) },
      /ready: events are printed/,
      { cwd: dir },
    );
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    t.ok(existsSync(join(dir, '.geohook/redis/appendonlydir')), 'AOF files are under ./.geohook/redis');
    const redisPort = Number(/\(Redis (?:redis:\/\/)?127\.0\.0\.1:(\d+)[;)]/.exec(output())?.[1]);
    t.ok(redisPort > 0, 'the embedded Redis URL is printed');
    t.match(output(), `fire a GP job:  curl -s -X POST http://127.0.0.1:${emulatorPort}/emulator/services/Tools/Buffer.GPServer/jobs`);
    t.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200, 'registered and ready');

    const fired = await fetch(`http://127.0.0.1:${emulatorPort}/emulator/services/Tools/Buffer.GPServer/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"outcome":"succeeded"}',
    });
    t.equal(fired.status, 200);
    const line = await waitFor('the event printed', () =>
      output()
        .split('\n')
        .find((text) => text.startsWith('{"id":')),
    );
    t.match(JSON.parse(line), { type: 'gp.job.succeeded', verified: true }, 'the event is printed as a JSON line');
    t.match(
      output(),
      /worker +npx geohook subscriptions create my-app --types 'gp\.\*,feature\.\*,change\.\*' && npx geohook consume --subscription my-app/,
    );

    // A second `up` in the same directory, on the same ports (a second `npm start`), is refused in one line and
    // exits: it must not start a second redis-server on the same AOF, nor stop at a port its twin holds.
    const second = await runCli(['up', '--port', String(port), '--host', '127.0.0.1'], {
      env: { EMULATOR_PORT: String(emulatorPort) },
      cwd: dir,
    });
    t.equal(second.code, 1);
    t.match(second.stderr, /^geohook: another geohook \(pid \d+\) runs the embedded Redis of .*\.geohook\/redis: stop it[^\n]*\n$/);

    // geohook doctor with no flags, beside it, checks what it registered on its emulator.
    const doctor = await runCli(['doctor'], { cwd: dir });
    t.equal(doctor.code, 0, doctor.stdout + doctor.stderr);
    t.match(
      doctor.stderr,
      /^geohook: checking the geohook up running in this directory \(pid \d+\): its emulator at http:\/\/127\.0\.0\.1:\d+\/arcgis\/admin\n/,
    );
    t.match(doctor.stdout, /^Tools\/Buffer\.GPServer\n(?:.*\n)*Hosted\/Parcels\.FeatureServer\n/);
    t.match(doctor.stdout, /round trip: ✓ /);
    t.notMatch(doctor.stdout, /[✗!] /, "all green: checked as the emulator's organization administrator");

    // Issue 50: a worker of the user's own beside `up`, on change-events (found in the same directory), gets every
    // one of the edits: up's printer shows them and takes none.
    const consumer = await startCli(['consume', '--type', 'change.*'], {}, /"queues":\["change-events"\].*"msg":"consuming/, { cwd: dir });
    const edits = 4;
    for (let n = 0; n < edits; n++) {
      const edited = await fetch(`http://127.0.0.1:${emulatorPort}/emulator/services/Hosted/Parcels.FeatureServer/applyEdits`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ edits: [{ id: 0, adds: [{ attributes: { parcel_id: `P-${n}`, status: 'Open' } }] }] }),
      });
      t.equal(edited.status, 200);
    }
    const consumed = await waitFor('every edit at the worker', () => {
      const lines = consumer
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{"id":') && text.includes('"change.created"'));
      return lines.length >= edits ? lines : undefined;
    });
    t.equal(new Set(consumed.map((text) => (JSON.parse(text) as { id: string }).id)).size, edits, 'the worker got all of them, once each');
    await waitFor(
      'every edit printed by up too',
      () =>
        output()
          .split('\n')
          .filter((text) => text.includes('"change.created"')).length >= edits,
    );
    consumer.child.kill('SIGTERM');
    t.equal((await once(consumer.child, 'exit'))[0], 0);

    // The embedded Redis takes a password, recorded with its URL where only its owner reads it; geohook events finds it there.
    const recorded = join(dir, '.geohook/redis/url');
    const password = new URL(readFileSync(recorded, 'utf8').trim()).password;
    t.ok(password.length >= 32, 'a password, recorded with the URL');
    t.equal(statSync(recorded).mode & 0o777, 0o600, 'the record is 0600');
    t.equal(statSync(join(dir, '.geohook/redis')).mode & 0o777, 0o700, 'the data directory is 0700');
    const stats = await runCli(['events', 'stats'], { cwd: dir });
    t.equal(stats.code, 0, stats.stderr);
    t.match(JSON.parse(stats.stdout), { 'gp-events': { completed: Number } }, 'geohook events reads the queues');

    child.kill('SIGINT');
    const [code] = await once(child, 'exit');
    t.equal(code, 0);
    const { createConnection } = await import('node:net');
    for (const [name, closedPort] of [
      ['embedded Redis', redisPort],
      ['emulator', emulatorPort],
      ['receiver', port],
    ] as const) {
      const refused = await new Promise<boolean>((resolve) => {
        const socket = createConnection(closedPort, '127.0.0.1');
        socket.on('connect', () => {
          socket.destroy();
          resolve(false);
        });
        socket.on('error', () => resolve(true));
      });
      t.ok(refused, `the ${name} is stopped`);
    }
    t.notOk(existsSync(join(dir, '.geohook/redis/url')), 'the record of the embedded Redis is gone');
    t.notOk(output().includes(password), 'the password is neither logged nor printed');
  },
);
