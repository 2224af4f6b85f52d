import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { subscribe } from '../../../src/consumers/subscribe.js';
import type { AnyGeohookEvent } from '../../../src/events/envelope.js';
import { connectRedis } from '../../../src/redis/connection.js';
import { sign } from '../../../src/signature/sign.js';
import { configFile, startReceiver, TEST_KEY, uniquePrefix } from '../../helpers/receiver.js';
import { startRedisCluster } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

/** Slot owners as `CLUSTER SLOTS` reports them: the port of the master serving `slot`. */
async function ownerOf(client: Redis, slot: number): Promise<number | undefined> {
  const ranges = await client.cluster('SLOTS');
  return ranges.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
}

t.test('a cluster master dies: its replica takes over and events keep flowing, each consumed once', async (t) => {
  const cluster = await startRedisCluster(t, { replicasPerMaster: 1, nodeTimeoutMs: 1000 });
  const nodes = cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));
  const prefix = `{${uniquePrefix()}}`;
  const receiver = await startReceiver(t, cluster, {
    REDIS_URL: '',
    GEOHOOK_PREFIX: prefix,
    GEOHOOK_CONFIG: configFile(t, { redis: { cluster: { nodes } } }),
  });

  const seen: AnyGeohookEvent[] = [];
  const connection = connectRedis({ cluster: { nodes } }, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const subscription = subscribe({ connection, prefix, handlers: { '*': (event) => void seen.push(event) } });
  t.teardown(async () => {
    await subscription.close({ timeoutMs: 1000 });
    connection.disconnect();
  });
  const ids: string[] = [];
  const deliverAll = async (count: number): Promise<void> => {
    for (let index = 0; index < count; index += 1) {
      const body = JSON.stringify({
        serviceType: 'GPServer',
        jobId: `j${randomUUID()}`,
        events: [{ eventType: 'esriJobSucceeded', when: Date.now() }],
      });
      const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
      t.equal(response.status, 202);
      ids.push(((await response.json()) as { id: string }).id);
    }
  };
  await deliverAll(20);
  await waitFor('20 events consumed', async () => seen.length >= 20);

  // The master of the prefix's slot, and its replica in sync with it.
  const survivor = new Redis(cluster.url);
  t.teardown(() => survivor.disconnect());
  const slot = await survivor.cluster('KEYSLOT', prefix);
  const masterPort = (await ownerOf(survivor, slot))!;
  const master = cluster.nodes.find((node) => node.port === masterPort)!;
  const masterClient = new Redis(master.url);
  t.teardown(() => masterClient.disconnect());
  await waitFor('replica in sync', async () => {
    const info = await masterClient.info('replication');
    const offset = Number(/master_repl_offset:(\d+)/.exec(info)?.[1]);
    return new RegExp(`slave0:.*state=online,offset=${offset},`).test(info);
  });
  masterClient.disconnect();
  await master.kill();

  const witness = new Redis(cluster.nodes.find((node) => node !== master)!.url);
  t.teardown(() => witness.disconnect());
  await waitFor(
    'the replica is promoted',
    async () => {
      const owner = await ownerOf(witness, slot);
      return owner !== undefined && owner !== masterPort && /cluster_state:ok/.test(String(await witness.cluster('INFO')));
    },
    { timeoutMs: 30_000 },
  );
  const probe = JSON.stringify({ serviceType: 'GPServer', jobId: 'probe', events: [{ eventType: 'esriJobSucceeded', when: 1 }] });
  await waitFor(
    'the receiver accepts again',
    async () => (await receiver.post(probe, { 'x-service': sign(TEST_KEY, probe) })).status === 202,
    { timeoutMs: 30_000 },
  );
  await deliverAll(20);
  await waitFor('41 events consumed', async () => seen.length >= 41, { timeoutMs: 30_000 });
  t.equal(seen.length, 41, 'each consumed once: 20 before, the probe and 20 after the failover');
  t.same(
    ids.filter((id) => !seen.some((event) => event.id === id)),
    [],
    'none lost',
  );
});
