import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { recordRedisUrl } from '../../../src/embedded/recorded-redis-url.js';
import { findFreePort } from '../../../src/embedded/redis-server.js';
import { sign } from '../../../src/signature/sign.js';
import { runCli, startCli } from '../../helpers/cli.js';
import { fixture } from '../../helpers/paths.js';
import { startReceiver, TEST_KEY } from '../../helpers/receiver.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

// Each test spawns geohook processes, which take several times their quiet duration on a loaded two-core machine.
t.setTimeout(2 * 60_000);

// With a password, as `geohook up`'s.
const redis = await startRedis(t, { requirePassword: true });

function jsonLines(output: string): Array<{ id: string; type: string }> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{"id":'))
    .map((line) => JSON.parse(line) as { id: string; type: string });
}

t.test('geohook consume prints the events matching its patterns as JSON lines, each once, and serves its metrics', async (t) => {
  const receiver = await startReceiver(t, redis);
  const metricsPort = await findFreePort();
  const { child, output } = await startCli(
    [
      'consume',
      '--type',
      'gp.*',
      '--type',
      'gp.job.succeeded',
      '--redis-url',
      redis.url,
      '--prefix',
      receiver.prefix,
      '--metrics-port',
      String(metricsPort),
    ],
    {},
    /"msg":"consuming/,
  );
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const ids: string[] = [];
  for (const name of ['enterprise-gp-succeeded.json', 'enterprise-feature-created.json', 'enterprise-gp-cancelled.json']) {
    const body = fixture(name);
    ids.push(((await (await receiver.post(body, { 'x-service': sign(TEST_KEY, body) })).json()) as { id: string }).id);
  }
  await waitFor('two GP events printed', async () => jsonLines(output()).length >= 2);
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  t.match(metrics, /geohook_events_consumed_total\{queue="gp-events",type="gp.job.succeeded",outcome="completed"\} 1/);
  t.match(metrics, /geohook_handler_duration_seconds_count\{handler="gp.\*",outcome="completed"\} 2/);
  t.equal(await receiver.app.eventQueue.queue('feature-events').getWaitingCount(), 1, 'the feature event is left for another consumer');

  const closed = once(child, 'close');
  child.kill('SIGTERM');
  const [code] = await closed;
  t.equal(code, 0, 'SIGTERM stops it cleanly');
  // The process has ended and all it printed has been read: a repeat or the feature event would be here.
  const printed = jsonLines(output());
  t.same(printed.map((event) => event.id).sort(), [ids[0], ids[2]].sort(), 'the GP events, once each; not the feature event');
  t.same(printed.map((event) => event.type).sort(), ['gp.job.canceled', 'gp.job.succeeded']);
});

t.test('geohook consume finds the Redis of a geohook up running in the same directory', async (t) => {
  const receiver = await startReceiver(t, redis);
  const dir = t.testdir();
  mkdirSync(join(dir, '.geohook/redis'), { recursive: true });
  recordRedisUrl(join(dir, '.geohook/redis'), redis.url); // as geohook up does: the URL with its password
  const { child, output } = await startCli(['consume', '--prefix', receiver.prefix], {}, /"msg":"consuming/, { cwd: dir });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const body = fixture('enterprise-feature-created.json');
  await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  await waitFor('the event printed', async () => jsonLines(output()).length === 1);
  t.equal(jsonLines(output())[0]!.type, 'feature.FeaturesCreated');
});

t.test('geohook consume refuses bad input with one line and exit 1', async (t) => {
  const dir = t.testdir();
  const cases: Array<[string[], RegExp]> = [
    [['consume', '--type', 'jobs.*', '--redis-url', redis.url], /^geohook: handler "jobs\.\*": a pattern is/],
    [['consume', '--concurrency', '0', '--redis-url', redis.url], /^geohook: --concurrency: a whole number from 1/],
    [['consume', '--metrics-port', 'x', '--redis-url', redis.url], /^geohook: --metrics-port:/],
    [['consume'], /^geohook: REDIS_URL: not set, and no `geohook up` is running in this directory/],
  ];
  for (const [args, message] of cases) {
    const result = await runCli(args, { cwd: dir });
    t.equal(result.code, 1, args.join(' '));
    t.match(result.stderr, message);
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line');
  }
});

t.test('issue 53: geohook consume with a password Redis refuses stops with one line naming the URL and the fix', async (t) => {
  const cases: Array<[string, RegExp]> = [
    [redis.displayUrl, /no password was given \(NOAUTH\)/],
    [`redis://:not-the-password@127.0.0.1:${redis.port}`, /the password is wrong \(WRONGPASS\)/],
  ];
  for (const [url, reason] of cases) {
    // Without --subscription, too: the trial's worker never got further than a stream of NOAUTH lines.
    const result = await runCli(['consume'], { env: { REDIS_URL: url }, cwd: t.testdir(), timeoutMs: 20_000 });
    t.equal(result.code, 1, 'exit 1, at once');
    const lines = result.stderr.trim().split('\n');
    t.equal(lines.length, 1, 'one line');
    t.match(lines[0], new RegExp(`^geohook: Redis at redis://127\\.0\\.0\\.1:${redis.port} refused the connection: `));
    t.match(lines[0], reason);
    t.match(lines[0], /Give its password in REDIS_URL .*with geohook up running here, use the URL in \.geohook\/redis\/url$/);
    t.notMatch(result.stderr, /not-the-password|^\s+at /m, 'no password, no stack');
    t.equal(result.stdout, '');
  }
});
