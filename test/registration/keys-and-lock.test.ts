import { Redis } from 'ioredis';
import t from 'tap';
import { loadConfig } from '../../src/config/load-config.js';
import { withLock } from '../../src/redis/lock.js';
import { HookKeys } from '../../src/signature/hook-keys.js';
import { sign } from '../../src/signature/sign.js';
import { startReceiver, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const client = new Redis(redis.url);
t.teardown(() => client.quit());

t.test('replicas generating at once end up with one shared key', async (t) => {
  const config = loadConfig({ HOOK_SECRETS: 'configured' });
  const prefix = uniquePrefix();
  const replicas = Array.from({ length: 5 }, () => new HookKeys({ hooks: config.hooks, prefix }));
  const keys = await Promise.all(replicas.map((keys) => keys.ensureGenerated(client, 'default')));
  t.equal(new Set(keys).size, 1, 'every replica got the same key');
  t.strictSame(await client.lrange(`${prefix}:hooks:default:keys`, 0, -1), [keys[0]]);
  t.strictSame(replicas[3]?.get('default')?.secrets, ['configured', keys[0]], 'configured keys come first');
});

t.test('with nothing generated a hook has exactly its configured keys', async (t) => {
  const config = loadConfig({ HOOK_SECRETS: 'a,b' });
  const keys = new HookKeys({ hooks: config.hooks, prefix: uniquePrefix() });
  await keys.load(client);
  t.equal(keys.get('default'), config.hooks.get('default'), 'the configured hook itself');
  t.strictSame(keys.generated('default'), []);
  t.equal(keys.get('nope'), undefined);
});

t.test('a receiver started after a key was generated verifies deliveries and challenges with it', async (t) => {
  const prefix = uniquePrefix();
  const generator = new HookKeys({ hooks: loadConfig({}).hooks, prefix });
  const key = await generator.ensureGenerated(client, 'default');
  const receiver = await startReceiver(t, redis, { GEOHOOK_PREFIX: prefix, HOOK_SECRETS: '' });
  const body = '{"serviceType":"GPServer","jobId":"gen","events":[{"eventType":"esriJobSucceeded"}]}';
  const accepted = await receiver.post(body, { 'x-service': sign(key, body) });
  t.equal(accepted.status, 202);
  t.match(await accepted.json(), { status: 'accepted' });
  t.equal((await receiver.post(body, { 'x-service': sign('other', body) })).status, 401);
  const challenge = await fetch(`${receiver.url}/webhooks/default?crc_token=abc`);
  t.same(await challenge.json(), { response_token: sign(key, 'abc') });
});

t.test('the lock lets one owner in at a time', async (t) => {
  const key = `${uniquePrefix()}:lock`;
  const order: string[] = [];
  const run = (name: string) =>
    withLock(
      client,
      key,
      async () => {
        order.push(`${name} in`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        order.push(`${name} out`);
      },
      { pollMs: 10 },
    );
  await Promise.all([run('a'), run('b'), run('c')]);
  for (let index = 0; index < order.length; index += 2) {
    t.equal(order[index]?.replace(' in', ' out'), order[index + 1], 'no one enters before the previous owner left');
  }
  t.equal(await client.exists(key), 0, 'released');
});

t.test('a lock that stays busy fails with GEOHOOK_ERR_REGISTRATION, and is not released by a non-owner', async (t) => {
  const key = `${uniquePrefix()}:lock`;
  await client.set(key, 'someone-else', 'PX', 10_000);
  await t.rejects(
    withLock(client, key, async () => t.fail('must not run'), { waitMs: 100, pollMs: 10 }),
    { code: 'GEOHOOK_ERR_REGISTRATION' },
  );
  t.equal(await client.get(key), 'someone-else', 'the owner keeps its lock');
});

t.test('an owner whose lock expired and was taken over does not release the new owner', async (t) => {
  const key = `${uniquePrefix()}:lock`;
  await withLock(
    client,
    key,
    async () => {
      await client.set(key, 'new-owner');
    },
    { ttlMs: 5000 },
  );
  t.equal(await client.get(key), 'new-owner');
});
