import { randomUUID } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { commitBatch } from '../../../src/changes/batch-commit.js';
import { changesQueueName } from '../../../src/changes/change-queues.js';
import { PreviousValuesStore } from '../../../src/changes/previous-values.js';
import type { ResolveJobData } from '../../../src/changes/range-jobs.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { subscribe } from '../../../src/consumers/subscribe.js';
import type { AnyGeohookEvent } from '../../../src/events/envelope.js';
import { connectRedis, configuredTarget } from '../../../src/redis/connection.js';
import { changesPreviousKey } from '../../../src/redis/keys.js';
import { sign } from '../../../src/signature/sign.js';
import { runCli } from '../../helpers/cli.js';
import { configFile, countJobs, startReceiver, TEST_KEY, uniquePrefix, type TestReceiver } from '../../helpers/receiver.js';
import { startRedisCluster } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

/** Redis Cluster for real: three masters started by the helper, `redis-cli --cluster create`. */
const cluster = await startRedisCluster(t);
const seeds = cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));

/** A receiver on the cluster under a prefix of its own with a hash tag; `nodes` empty: REDIS_URL is the seed. */
async function startClusterReceiver(t: Test, nodes: typeof seeds, env: Record<string, string> = {}): Promise<TestReceiver> {
  const GEOHOOK_CONFIG = configFile(t, { redis: { cluster: { nodes } } });
  return startReceiver(t, cluster, {
    GEOHOOK_PREFIX: `{${uniquePrefix()}}`,
    GEOHOOK_CONFIG,
    ...(nodes.length > 0 ? { REDIS_URL: '' } : {}),
    ...env,
  });
}

/** A consumer of every event on the cluster, with a cluster connection of its own. */
function consumeAll(t: Test, receiver: TestReceiver): AnyGeohookEvent[] {
  const seen: AnyGeohookEvent[] = [];
  const connection = connectRedis(configuredTarget({ redisUrl: undefined, redis: { options: {}, cluster: { nodes: seeds } } }), {
    maxRetriesPerRequest: null,
  });
  const subscription = subscribe({ connection, prefix: receiver.prefix, handlers: { '*': (event) => void seen.push(event) } });
  t.teardown(async () => {
    await subscription.close({ timeoutMs: 1000 });
    await connection.quit();
  });
  return seen;
}

function gpBody(eventType: string): string {
  return JSON.stringify({
    serviceType: 'GPServer',
    jobId: `j${randomUUID()}`,
    name: 'hook',
    serviceName: 'Buffer',
    folderName: 'Tools',
    taskName: 'Buffer',
    events: [{ eventType, when: Date.now() }],
  });
}

function featureBody(): string {
  return JSON.stringify({
    serviceType: 'FeatureServer',
    id: randomUUID(),
    name: 'hook',
    folderName: '',
    serviceName: 'Parcels',
    changesUrl: 'https://gis.example.com/x',
    events: [{ eventType: 'FeaturesCreated', when: Date.now() }],
  });
}

async function deliver(receiver: TestReceiver, body: string): Promise<{ status: number; id?: string; duplicate?: boolean }> {
  const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  return { ...((await response.json()) as { id?: string; duplicate?: boolean }), status: response.status };
}

t.test('the helper starts a real cluster: three masters sharing all 16,384 slots', async (t) => {
  const client = new Redis(cluster.url);
  t.teardown(() => client.disconnect());
  const info = String(await client.cluster('INFO'));
  t.match(info, /cluster_state:ok/);
  t.match(info, /cluster_slots_assigned:16384/);
  t.match(info, /cluster_size:3/);
});

t.test('with a cluster the prefix must hold a hash tag: {geohook} by default, a plain one refused', async (t) => {
  const GEOHOOK_CONFIG = configFile(t, { redis: { cluster: { nodes: seeds } } });
  t.equal(loadConfig({ GEOHOOK_CONFIG }).prefix, '{geohook}');
  t.equal(loadConfig({ GEOHOOK_CONFIG, GEOHOOK_PREFIX: 'app{hooks}' }).prefix, 'app{hooks}');
  t.throws(() => loadConfig({ GEOHOOK_CONFIG, GEOHOOK_PREFIX: 'geohook' }), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /GEOHOOK_PREFIX: with a Redis Cluster it must hold a hash tag, such as \{geohook\}/,
  });
  t.throws(
    () => loadConfig({ GEOHOOK_CONFIG, GEOHOOK_PREFIX: '{}geohook' }),
    { message: /GEOHOOK_PREFIX/ },
    'an empty tag hashes the whole key',
  );
  const connection = new Cluster(seeds, { lazyConnect: true });
  t.throws(() => subscribe({ connection, prefix: 'geohook', handlers: { '*': () => undefined } }), {
    message: /GEOHOOK_PREFIX: with a Redis Cluster/,
  });
  t.throws(
    () =>
      loadConfig({
        GEOHOOK_CONFIG: configFile(t, { redis: { cluster: {}, options: { sentinels: [{ host: 'a', port: 1 }], name: 'm' } } }),
      }),
    { message: /redis\.cluster": Sentinel or Cluster, not both/ },
  );
});

t.test('receiver → consumer on the cluster: every delivery consumed exactly once', async (t) => {
  const receiver = await startClusterReceiver(t, seeds);
  t.ok(receiver.app.eventQueue.queue('gp-events').opts.connection instanceof Cluster, 'the queues use a cluster connection');
  const seen = consumeAll(t, receiver);
  const ids = new Set<string>();
  const bodies = Array.from({ length: 60 }, (_, index) =>
    index % 3 === 0 ? featureBody() : gpBody(index % 3 === 1 ? 'esriJobSucceeded' : 'esriJobFailed'),
  );
  for (const reply of await Promise.all(bodies.map((body) => deliver(receiver, body)))) {
    t.equal(reply.status, 202);
    ids.add(reply.id!);
  }
  t.equal(ids.size, 60, '60 distinct events acknowledged');
  await waitFor('60 events consumed', async () => seen.length >= 60);
  t.equal(seen.length, 60, 'none consumed twice');
  t.same(new Set(seen.map((event) => event.id)), ids);
  t.equal(seen.filter((event) => event.type === 'feature.FeaturesCreated').length, 20);

  // Every key of the prefix is in the one slot of its hash tag, on the master that owns it.
  const client = new Cluster(seeds);
  t.teardown(() => client.disconnect());
  await waitFor('cluster client ready', async () => client.status === 'ready');
  const slot = await client.cluster('KEYSLOT', receiver.prefix);
  const keyCounts = await Promise.all(client.nodes('master').map((node) => node.cluster('COUNTKEYSINSLOT', slot)));
  t.equal(keyCounts.filter((count) => count > 0).length, 1, 'one master holds the slot');
  t.ok(Math.max(...keyCounts) > 60, 'and every job and dedup key');
});

t.test('dedup on the cluster: the same delivery twice is one event (REDIS_URL as the seed)', async (t) => {
  const receiver = await startClusterReceiver(t, []);
  const seen = consumeAll(t, receiver);
  const body = gpBody('esriJobSucceeded');
  const first = await deliver(receiver, body);
  const second = await deliver(receiver, body);
  t.match(first, { status: 202, duplicate: false });
  t.match(second, { status: 202, duplicate: true, id: first.id });
  await waitFor('the event consumed', async () => seen.length >= 1);
  t.equal(await countJobs(receiver.app), 1, 'one job');
  const later = await deliver(receiver, gpBody('esriJobSucceeded'));
  await waitFor('the next event consumed', async () => seen.length >= 2);
  t.same(
    seen.map((event) => event.id),
    [first.id, later.id],
    'the repeat was never consumed',
  );

  // The CLI reads the same queues through the same GEOHOOK_CONFIG.
  const GEOHOOK_CONFIG = configFile(t, { redis: { cluster: { nodes: seeds } } });
  await waitFor(
    'both jobs completed',
    async () => (await receiver.app.eventQueue.queue('gp-events').getJobCounts('completed')).completed === 2,
  );
  const stats = await runCli(['events', 'stats'], { env: { GEOHOOK_CONFIG, GEOHOOK_PREFIX: receiver.prefix } });
  t.equal(stats.code, 0, stats.stderr);
  t.match(JSON.parse(stats.stdout), { 'gp-events': { completed: 2, failed: 0 } }, 'geohook events stats on the cluster');
});

t.test('strict durability on a cluster checks every master: without AOF, 503 and /readyz says what to change', async (t) => {
  const receiver = await startClusterReceiver(t, seeds, { DURABILITY: 'strict' });
  const response = await receiver.post('{}', { 'x-service': sign(TEST_KEY, '{}') });
  t.equal(response.status, 503);
  const ready = await fetch(`${receiver.url}/readyz`);
  t.equal(ready.status, 503);
  t.match(await ready.text(), /appendfsync always on every master of the cluster/);
});

t.test("a change batch's previous values and its resolve job's cursor, one MULTI on the cluster (the prefix's slot)", async (t) => {
  const prefix = `{${uniquePrefix()}}`;
  const connection = new Cluster(seeds, { redisOptions: { maxRetriesPerRequest: null } });
  const queue = new Queue<ResolveJobData>(changesQueueName, { connection, prefix });
  t.teardown(async () => {
    await queue.close();
    connection.disconnect();
  });
  const data = { hook: 'default', scope: 'default Hosted/Parcels.FeatureServer', serviceUrl: 'https://gis.example.com/x', from: 1, to: 2 };
  const job = await queue.add('resolve', data);
  const store = new PreviousValuesStore(connection);
  const key = changesPreviousKey(prefix, `${data.scope}#0`);
  await commitBatch(connection, store, job, [{ key, writes: [{ objectId: 7, serverGen: 2, attributes: { status: 'Open' } }] }], 1);
  t.equal((await Job.fromId<ResolveJobData>(queue, job.id!))?.data.written, 1, "the job's cursor moved");
  t.same((await store.read(key, [7])).get(7)?.attributes, { status: 'Open' }, 'and the values were written');
});
