import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { subscribe, type SubscribeOptions } from '../../src/consumers/subscribe.js';
import { recordRedisUrl } from '../../src/embedded/recorded-redis-url.js';
import { GeohookError } from '../../src/errors.js';
import { sign } from '../../src/signature/sign.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { fixture } from '../helpers/paths.js';
import { startReceiver, TEST_KEY, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// As `geohook up`'s: clients must give the password its URL carries.
const redis = await startRedis(t, { requirePassword: true });
const wrongPassword = `redis://:not-the-password@127.0.0.1:${redis.port}`;
const admin = new Redis(redis.url);
t.teardown(() => admin.quit());

/** Connections Redis holds besides the test's own: a refused subscription leaves none trying. */
async function otherClients(): Promise<number> {
  const list = String(await admin.client('LIST'));
  return list.trim().split('\n').length - 1;
}

/** `subscribe()` run from `dir` with `REDIS_URL` as given (unset when undefined), both restored at teardown. */
function subscribeIn(t: Test, dir: string, redisUrl: string | undefined, options: Omit<SubscribeOptions, 'handlers'> = {}) {
  const [cwd, previous] = [process.cwd(), process.env.REDIS_URL];
  t.teardown(() => {
    process.chdir(cwd);
    if (previous === undefined) delete process.env.REDIS_URL;
    else process.env.REDIS_URL = previous;
  });
  process.chdir(dir);
  if (redisUrl === undefined) delete process.env.REDIS_URL;
  else process.env.REDIS_URL = redisUrl;
  const seen: string[] = [];
  const subscription = subscribe({ prefix: uniquePrefix(), ...options, handlers: { '*': (event) => void seen.push(event.type) } });
  t.teardown(() => subscription.close({ timeoutMs: 1000 }));
  return { subscription, seen };
}

// Before the fix ready() never settled and the workers retried for ever: a deadline turns that into a failure.
const refused = { timeout: 30_000 };

t.test('issue 53: a password Redis refuses is one GEOHOOK_ERR_REDIS_AUTH from ready(), and the subscription stops', refused, async (t) => {
  for (const [url, reason] of [
    [redis.displayUrl, /no password was given \(NOAUTH\)/],
    [wrongPassword, /the password is wrong \(WRONGPASS\)/],
  ] as const) {
    const { logger, lines } = capturingLogger();
    const subscription = subscribe({ connection: url, prefix: uniquePrefix(), logger, handlers: { '*': () => undefined } });
    t.teardown(() => subscription.close({ timeoutMs: 1000 }));
    const err = (await subscription.ready().then(
      () => undefined,
      (error: unknown) => error,
    )) as GeohookError;
    t.ok(err instanceof GeohookError, 'ready() rejects with a GeohookError');
    t.equal(err.code, 'GEOHOOK_ERR_REDIS_AUTH');
    t.match(err.message, `Redis at redis://127.0.0.1:${redis.port} refused the connection`);
    t.match(err.message, reason);
    t.match(err.message, /\.geohook\/redis\/url/, 'it says where the right URL is');
    t.notMatch(err.message, /not-the-password/, 'never the password');
    await waitFor('the workers to stop trying', async () => (await otherClients()) === 0);
    t.same(lines, [], 'ready() reports it: nothing is logged, no stream of retries');
  }
});

t.test('issue 53: a refusal nobody waits on with ready() is logged once, as one line without a stack', refused, async (t) => {
  const { logger, lines } = capturingLogger();
  subscribe({ connection: redis.displayUrl, prefix: uniquePrefix(), logger, handlers: { '*': () => undefined } });
  await waitFor('the refusal logged', async () => lines.length > 0);
  await waitFor('the workers to stop trying', async () => (await otherClients()) === 0);
  t.equal(lines.length, 1, 'once');
  const line = JSON.parse(lines[0]!) as { level: number; code: string; msg: string; err?: unknown };
  t.equal(line.code, 'GEOHOOK_ERR_REDIS_AUTH');
  t.equal(line.level, 50, 'an error');
  t.equal(line.err, undefined, 'no stack');
});

t.test('issue 53: without a connection subscribe() takes REDIS_URL, else the Redis the geohook up of its folder records', async (t) => {
  const receiver = await startReceiver(t, redis);
  const up = t.testdir({ '.geohook': { redis: {} } });
  recordRedisUrl(`${up}/.geohook/redis`, redis.url);

  const { subscription, seen } = subscribeIn(t, up, undefined, { prefix: receiver.prefix });
  await subscription.ready();
  const body = fixture('enterprise-feature-created.json');
  await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  await waitFor('the event handled', async () => seen.length === 1);
  t.same(seen, ['feature.FeaturesCreated'], 'it read .geohook/redis/url, password included');

  const first = subscribeIn(t, up, redis.displayUrl).subscription;
  await t.rejects(first.ready(), { code: 'GEOHOOK_ERR_REDIS_AUTH', message: /Give its password in REDIS_URL/ }, 'REDIS_URL comes first');
});

t.test('issue 53: without a connection, REDIS_URL or a geohook up in its folder, subscribe() says so', async (t) => {
  t.throws(() => subscribeIn(t, t.testdir(), undefined), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /^REDIS_URL: not set, and no `geohook up` is running in this directory/,
  });
});
