import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Queue } from 'bullmq';
import type { Cluster } from 'ioredis';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import { subscribe } from '../../src/consumers/subscribe.js';
import { subscriptionQueueName } from '../../src/queue/names.js';
import { connectRedis, configuredTarget } from '../../src/redis/connection.js';
import { eventLogKey, fanoutKey, subscriptionsKey } from '../../src/redis/keys.js';
import { relayQueueName } from '../../src/relay/relay-queues.js';
import { sign } from '../../src/signature/sign.js';
import { startGeohook, type TestGeohook } from '../helpers/geohook.js';
import { startSink } from '../helpers/http-sink.js';
import { configFile, TEST_KEY, uniquePrefix } from '../helpers/receiver.js';
import { startRedisCluster } from '../helpers/redis.js';
import { SECRET_A } from '../helpers/relay-events.js';
import { waitFor } from '../helpers/wait.js';

/** Redis Cluster for real: three masters started by the helper, `redis-cli --cluster create`. */
const cluster = await startRedisCluster(t);
const seeds = cluster.nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));

/** A cluster connection of the test's own, made as geohook makes its own (it waits for Redis), closed at teardown. */
function connectCluster(t: Test): Cluster {
  const connection = connectRedis(configuredTarget({ redisUrl: undefined, redis: { options: {}, cluster: { nodes: seeds } } }), {
    maxRetriesPerRequest: null,
  }) as Cluster;
  t.teardown(() => connection.disconnect());
  return connection;
}

/** The headers of a received request as the verifier takes them (single values). */
const headersOf = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).flatMap(([name, value]) => (typeof value === 'string' ? [[name, value]] : [])));

/** Delivery `index`: a GP job of Tools/Buffer (succeeded or failed) two times in three, features created in Parcels else. */
function bodyOf(index: number): string {
  if (index % 3 === 2)
    return JSON.stringify({
      serviceType: 'FeatureServer',
      id: randomUUID(),
      name: 'hook',
      folderName: 'Hosted',
      serviceName: 'Parcels',
      changesUrl: 'https://gis.example.com/x',
      events: [{ eventType: 'FeaturesCreated', when: Date.now() }],
    });
  return JSON.stringify({
    serviceType: 'GPServer',
    jobId: `j${randomUUID()}`,
    name: 'hook',
    serviceName: 'Buffer',
    folderName: 'Tools',
    taskName: 'Buffer',
    events: [{ eventType: index % 3 === 0 ? 'esriJobSucceeded' : 'esriJobFailed', when: Date.now() }],
  });
}

/** Posts a signed delivery; the acknowledged event's id and type. */
async function deliver(geohook: TestGeohook, body: string): Promise<{ id: string; gp: boolean }> {
  const response = await fetch(`${geohook.url}/webhooks/default`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
    body,
  });
  if (response.status !== 202) throw new Error(`the receiver answered ${response.status}: ${await response.text()}`);
  return { id: ((await response.json()) as { id: string }).id, gp: body.includes('GPServer') };
}

/** Each id with how many times it was seen. */
function tally(ids: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

t.test('on a Redis Cluster the fan-out hands each signed delivery to a relay route and to each subscription taking it, once', async (t) => {
  const prefix = `{${uniquePrefix()}}`;
  const standard = new StandardWebhook(SECRET_A);
  const relayed: string[] = [];
  const sink = await startSink(t, (request, response, body) => {
    try {
      standard.verify(body.toString('utf8'), headersOf(request.headers));
      relayed.push(String(request.headers['webhook-id']));
      response.writeHead(204).end();
    } catch {
      response.writeHead(401).end();
    }
  });
  const geohook = await startGeohook(t, cluster.nodes[0]!, {
    GEOHOOK_PREFIX: prefix,
    HOOK_SECRETS: TEST_KEY,
    GEOHOOK_CONFIG: configFile(t, {
      redis: { cluster: { nodes: seeds } },
      relays: [{ name: 'sink', url: `${sink.url}/hooks`, types: ['gp.*'], secret: SECRET_A }],
      subscriptions: [
        { name: 'apps', types: ['gp.*', 'feature.*'] },
        { name: 'parcels', types: ['feature.*'] },
      ],
    }),
  });
  const connection = connectCluster(t);
  // The receiver makes the subscriptions of its config once it is up: they take what is stored after that.
  await waitFor('the subscriptions of the config made', async () => (await connection.hlen(subscriptionsKey(prefix))) === 2);

  const handled = { apps: [] as string[], parcels: [] as string[] };
  for (const name of ['apps', 'parcels'] as const) {
    const subscription = subscribe({
      connection,
      prefix,
      subscription: name,
      handlers: { '*': (event) => void handled[name].push(event.id) },
    });
    t.teardown(() => subscription.close({ timeoutMs: 1000 }));
  }

  const delivered = await Promise.all(Array.from({ length: 30 }, (_, index) => deliver(geohook, bodyOf(index))));
  const all = delivered.map(({ id }) => id).sort();
  const gp = delivered
    .filter((event) => event.gp)
    .map(({ id }) => id)
    .sort();
  const features = delivered
    .filter((event) => !event.gp)
    .map(({ id }) => id)
    .sort();
  t.equal(new Set(all).size, 30, '30 distinct events acknowledged');

  // Everything handed over (the cursor at the log's end) and nothing left to deliver or handle: the counts are final.
  const log = await connection.xrange(eventLogKey(prefix), '-', '+');
  t.equal(log.length, 30, 'each event once in the event log');
  await waitFor('the cursor at the log’s end', async () => (await connection.hget(fanoutKey(prefix), 'cursor')) === log.at(-1)![0], {
    timeoutMs: 30_000,
  });
  const queues = [relayQueueName('sink'), subscriptionQueueName('apps'), subscriptionQueueName('parcels')].map((name) => {
    const queue = new Queue(name, { connection, prefix });
    t.teardown(() => queue.close());
    return queue;
  });
  await waitFor(
    'the relay route and the subscriptions idle',
    async () => {
      const counts = await Promise.all(queues.map((queue) => queue.getJobCounts('wait', 'active', 'delayed', 'prioritized')));
      return counts.every((count) => Object.values(count).every((n) => n === 0)) && handled.apps.length >= 30 && relayed.length >= 20;
    },
    { timeoutMs: 30_000 },
  );

  t.same([...relayed].sort(), gp, 'the route (gp.*) got every GP event, verified by standardwebhooks');
  t.same(
    [...tally(relayed).values()].filter((n) => n > 1),
    [],
    'none twice',
  );
  t.same([...handled.apps].sort(), all, 'subscription apps (gp.* and feature.*) handled every event once');
  t.same([...handled.parcels].sort(), features, 'subscription parcels (feature.*) handled every feature event once');
  t.equal((await queues[1]!.getJobCounts('completed')).completed, 30, 'apps: 30 jobs, all completed');
  t.notMatch(geohook.log(), /CROSSSLOT|fan-out: retrying/, 'no CROSSSLOT error, no fan-out turn failed');
});
