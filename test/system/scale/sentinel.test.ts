import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { subscribe } from '../../../src/consumers/subscribe.js';
import type { AnyGeohookEvent } from '../../../src/events/envelope.js';
import { connectRedis } from '../../../src/redis/connection.js';
import { sign } from '../../../src/signature/sign.js';
import { configFile, startReceiver, TEST_KEY, type TestReceiver } from '../../helpers/receiver.js';
import { startRedis, startReplica, startSentinel } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';

/** Redis Sentinel for real: a master, its replica and a sentinel, all local; geohook only knows the sentinel. */
t.test('through Sentinel: events flow, and keep flowing after a failover to the replica', async (t) => {
  const master = await startRedis(t);
  const replica = await startReplica(t, master);
  const sentinel = await startSentinel(t, master);
  const options = { sentinels: [{ host: '127.0.0.1', port: sentinel.port }], name: 'mymaster' };
  const receiver = await startReceiver(t, master, { REDIS_URL: '', GEOHOOK_CONFIG: configFile(t, { redis: { options } }) });

  const seen: AnyGeohookEvent[] = [];
  const connection = connectRedis({ options }, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  // The failover below is connection trouble the consumer would warn about on stderr, stack and all: not news here.
  const subscription = subscribe({
    connection,
    prefix: receiver.prefix,
    handlers: { '*': (event) => void seen.push(event) },
    logger: pino({ level: 'silent' }),
  });
  t.teardown(async () => {
    await subscription.close({ timeoutMs: 1000 });
    connection.disconnect();
  });

  const ids: string[] = [];
  const deliver = async (target: TestReceiver, payload: unknown): Promise<void> => {
    const body = JSON.stringify(payload);
    const response = await target.post(body, { 'x-service': sign(TEST_KEY, body) });
    t.equal(response.status, 202);
    ids.push(((await response.json()) as { id: string }).id);
  };
  const deliverAll = async (target: TestReceiver, count: number): Promise<void> => {
    for (let index = 0; index < count; index += 1) {
      await deliver(target, {
        serviceType: 'GPServer',
        jobId: `j${randomUUID()}`,
        events: [{ eventType: 'esriJobSucceeded', when: Date.now() }],
      });
    }
  };
  await deliverAll(receiver, 20);
  await waitFor('20 events consumed', async () => seen.length >= 20);
  const masterClient = new Redis(master.url);
  t.teardown(() => masterClient.disconnect());
  t.ok((await masterClient.dbsize()) > 0, 'the events are on the master the sentinel named');

  // Everything acknowledged is on the replica before the master dies (replication is asynchronous: what
  // the replica has not received when a master dies is lost, whatever the client).
  const replicaClient = new Redis(replica.url);
  t.teardown(() => replicaClient.disconnect());
  const offset = (info: string, name: string): number => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1] ?? -1);
  await waitFor('replica in sync', async () => {
    const masterOffset = offset(await masterClient.info('replication'), 'master_repl_offset');
    return offset(await replicaClient.info('replication'), 'master_repl_offset') === masterOffset;
  });
  masterClient.disconnect();
  await master.kill();

  const sentinelClient = new Redis(sentinel.url);
  t.teardown(() => sentinelClient.disconnect());
  await waitFor(
    'the sentinel promotes the replica',
    async () => ((await sentinelClient.call('SENTINEL', 'get-master-addr-by-name', 'mymaster')) as string[])[1] === String(replica.port),
    { timeoutMs: 30_000 },
  );
  const probe = JSON.stringify({ serviceType: 'GPServer', jobId: 'probe', events: [{ eventType: 'esriJobSucceeded', when: 1 }] });
  await waitFor(
    'the receiver accepts again',
    async () => (await receiver.post(probe, { 'x-service': sign(TEST_KEY, probe) })).status === 202,
    { timeoutMs: 30_000 },
  );
  await deliverAll(receiver, 20);
  // One event for each of the other queues: every worker's blocking connection is back on the new master.
  await deliver(receiver, { serviceType: 'FeatureServer', name: 'Parcels', events: [{ eventType: 'FeaturesCreated', when: Date.now() }] });
  await deliver(receiver, { hello: 'an unknown payload' });
  await waitFor('43 events consumed', async () => seen.length >= 43, { timeoutMs: 30_000 });
  t.equal(seen.length, 43, 'each consumed once: 20 before, the probe, 20 after the failover and one on each other queue');
  t.same(
    [...new Set(seen.map((event) => event.family))].sort(),
    ['feature', 'gp', 'unknown'],
    'every queue is consumed after the failover',
  );
  t.same(
    ids.filter((id) => !seen.some((event) => event.id === id)),
    [],
    'none lost',
  );
});
