import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import t, { type Test } from 'tap';
import { DEFAULT_BACKLOG } from '../../src/config/subscription-schema.js';
import { subscribe } from '../../src/consumers/subscribe.js';
import type { StoredEvent } from '../../src/events/envelope.js';
import { tailEventLog } from '../../src/fanout/tail-event-log.js';
import { eventLogKey, fanoutKey, subscriptionsKey } from '../../src/redis/keys.js';
import { sign } from '../../src/signature/sign.js';
import { SubscriptionRegistry } from '../../src/subscriptions/subscription-registry.js';
import { readSubscriptionStatus } from '../../src/subscriptions/subscription-status.js';
import { startGeohook, type TestGeohook } from '../helpers/geohook.js';
import { configFile, TEST_KEY, uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);

/** A connection of the test's own, closed at teardown. */
function connect(t: Test): Redis {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => connection.disconnect());
  return connection;
}

/** `count` receivers (`geohook serve` in-process) on one prefix, with `config` as GEOHOOK_CONFIG; signed deliveries accepted. */
async function receivers(
  t: Test,
  count: number,
  config: { subscriptions?: object[] } = {},
): Promise<{ prefix: string; geohooks: TestGeohook[] }> {
  const prefix = uniquePrefix();
  const env = { GEOHOOK_PREFIX: prefix, HOOK_SECRETS: TEST_KEY, LOG_LEVEL: 'info', GEOHOOK_CONFIG: configFile(t, config) };
  const geohooks: TestGeohook[] = [];
  for (let i = 0; i < count; i += 1) geohooks.push(await startGeohook(t, redis, env));
  // The receivers make the subscriptions of the config once they are up: they take what is stored after that.
  const registry = new SubscriptionRegistry(connect(t), prefix);
  const declared = config.subscriptions?.length ?? 0;
  await waitFor('the subscriptions of the config made', async () => (await registry.list()).length === declared);
  return { prefix, geohooks };
}

/** Posts a signed GP delivery (distinct bytes) of `service` (`Tools/<service>.GPServer`); the acknowledged event id. */
async function postGp(geohook: TestGeohook, eventType: 'esriJobSucceeded' | 'esriJobFailed', service = 'Buffer'): Promise<string> {
  const body = JSON.stringify({
    serviceType: 'GPServer',
    jobId: `j${randomUUID()}`,
    statusURL: `http://127.0.0.1:1/arcgis/rest/services/Tools/${service}/GPServer/${service}/jobs/x`,
    name: 'hook',
    taskName: service,
    folderName: 'Tools',
    serviceName: service,
    events: [{ eventType, when: Date.now() }],
  });
  const response = await fetch(`${geohook.url}/webhooks/default`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service': sign(TEST_KEY, body) },
    body,
  });
  if (response.status !== 202) throw new Error(`receiver answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

/** Every event id a subscription's workers handled, with how many times. */
class Handled {
  readonly counts = new Map<string, number>();
  readonly types = new Map<string, string>();

  add(id: string, type: string): void {
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
    this.types.set(id, type);
  }

  get ids(): string[] {
    return [...this.counts.keys()].sort();
  }

  get repeated(): string[] {
    return [...this.counts].filter(([, count]) => count > 1).map(([id]) => id);
  }
}

/** `workers` `subscribe({ subscription })` workers of `name` on `prefix`, recording into one Handled; closed at teardown. */
async function workersOf(t: Test, prefix: string, name: string, workers = 1): Promise<Handled> {
  const handled = new Handled();
  for (let i = 0; i < workers; i += 1) {
    const subscription = subscribe({
      connection: redis.url,
      prefix,
      subscription: name,
      concurrency: 2,
      handlers: { '*': (event) => handled.add(event.id, event.type) },
    });
    t.teardown(() => subscription.close({ timeoutMs: 1000 }));
    await subscription.ready();
  }
  return handled;
}

const sorted = (ids: Iterable<string>): string[] => [...ids].sort();

/**
 * Waits until nothing more can reach the workers of `names`: the fan-out has handed over the whole log, and no job of
 * their queues is waiting, running or due for a retry. A repeat would have been handled by then.
 */
async function settled(t: Test, prefix: string, names: readonly string[]): Promise<void> {
  const connection = connect(t);
  const queues = names.map((name) => {
    const queue = new Queue(`sub-${name}`, { connection, prefix });
    t.teardown(() => queue.close());
    return queue;
  });
  await waitFor('the fan-out at the end of the log and every job done', async () => {
    const [last] = await connection.xrevrange(eventLogKey(prefix), '+', '-', 'COUNT', 1);
    if (last === undefined || (await connection.hget(fanoutKey(prefix), 'cursor')) !== last[0]) return false;
    const counts = await Promise.all(queues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')));
    return counts.every((count) => Object.values(count).every((n) => n === 0));
  });
}

t.test("two subscriptions' workers each handle every event once, whichever receiver took it", async (t) => {
  const { prefix, geohooks } = await receivers(t, 2, {
    subscriptions: [
      { name: 'billing', types: ['gp.*'] },
      { name: 'audit', types: ['gp.*'] },
    ],
  });
  const billing = await workersOf(t, prefix, 'billing', 3);
  const audit = await workersOf(t, prefix, 'audit', 3);
  const acknowledged: string[] = [];
  for (let i = 0; i < 12; i += 1) acknowledged.push(await postGp(geohooks[i % 2]!, i % 3 === 0 ? 'esriJobFailed' : 'esriJobSucceeded'));
  t.equal(new Set(acknowledged).size, 12);
  await waitFor('both subscriptions to have every event', () => billing.counts.size >= 12 && audit.counts.size >= 12);
  await settled(t, prefix, ['billing', 'audit']);
  t.same(billing.ids, sorted(acknowledged), 'billing: every acknowledged event');
  t.same(audit.ids, sorted(acknowledged), 'audit: every acknowledged event');
  t.same(billing.repeated, [], 'billing: none twice');
  t.same(audit.repeated, [], 'audit: none twice');
});

t.test('a subscription takes only the types and services it names', async (t) => {
  const { prefix, geohooks } = await receivers(t, 1, {
    subscriptions: [
      { name: 'failures', types: ['gp.job.failed'] },
      { name: 'clip', types: ['gp.*'], services: ['Tools/Clip.GPServer'] },
      { name: 'everything', types: ['gp.*'] },
    ],
  });
  const failures = await workersOf(t, prefix, 'failures');
  const clip = await workersOf(t, prefix, 'clip');
  const everything = await workersOf(t, prefix, 'everything');
  const posted: { id: string; failed: boolean; service: string }[] = [];
  for (let i = 0; i < 8; i += 1) {
    const failed = i % 2 === 0;
    const service = i % 4 < 2 ? 'Buffer' : 'Clip';
    posted.push({ id: await postGp(geohooks[0]!, failed ? 'esriJobFailed' : 'esriJobSucceeded', service), failed, service });
  }
  // The subscription that takes everything is the yardstick: once it has all, the fan-out has handed them all over.
  await waitFor('every event handed over', () => everything.counts.size >= posted.length);
  await settled(t, prefix, ['failures', 'clip', 'everything']);
  t.same(failures.ids, sorted(posted.filter(({ failed }) => failed).map(({ id }) => id)), 'types: exactly the failed jobs');
  t.ok(
    [...failures.types.values()].every((type) => type === 'gp.job.failed'),
    'of type gp.job.failed',
  );
  t.same(clip.ids, sorted(posted.filter(({ service }) => service === 'Clip').map(({ id }) => id)), 'services: exactly those of Clip');
  t.same([...failures.repeated, ...clip.repeated], [], 'none twice');
});

t.test('a subscription made while deliveries flow gets every event acknowledged after it was made, once', async (t) => {
  const { prefix, geohooks } = await receivers(t, 2);
  const registry = new SubscriptionRegistry(connect(t), prefix);
  const handled = await workersOf(t, prefix, 'late', 2);
  const before: string[] = [];
  const after: string[] = [];
  let phase: 'before' | 'during' | 'after' = 'before';
  const senders = geohooks.map(async (geohook) => {
    for (let i = 0; i < 10; i += 1) {
      const sentIn = phase;
      const id = await postGp(geohook, 'esriJobSucceeded');
      // Sent once `create` had resolved: stored after it. Acknowledged before it was called: stored before.
      if (sentIn === 'after') after.push(id);
      else if (phase === 'before') before.push(id);
    }
  });
  await waitFor('deliveries flowing', () => before.length >= 4);
  phase = 'during';
  t.equal(await registry.create({ name: 'late', types: ['gp.*'] }, { origin: 'runtime' }), 'created');
  phase = 'after';
  await Promise.all(senders);
  t.ok(after.length >= 4, `${after.length} events acknowledged after it was made`);
  await waitFor('every event acknowledged after it was made', () => after.every((id) => handled.counts.has(id)));
  await settled(t, prefix, ['late']);
  t.same(handled.repeated, [], 'each once');
  t.same(
    before.filter((id) => handled.counts.has(id)),
    [],
    'none acknowledged before it was made',
  );
});

t.test('a subscription made with `from` catches up on what the log holds since then, then takes new events, each once', async (t) => {
  const { prefix, geohooks } = await receivers(t, 1, {
    subscriptions: [{ name: 'yardstick', types: ['gp.*'] }],
  });
  const connection = connect(t);
  const registry = new SubscriptionRegistry(connection, prefix);
  const yardstick = await workersOf(t, prefix, 'yardstick');
  const geohook = geohooks[0]!;
  const early = await postGp(geohook, 'esriJobSucceeded');
  await waitFor('the first event handed over', () => yardstick.counts.size === 1);
  // `from`: a millisecond after the first event was stored, and past before the next ones are.
  const [[firstId]] = (await connection.xrevrange(eventLogKey(prefix), '+', '-', 'COUNT', 1)) as [[string, string[]]];
  const from = new Date(Number(firstId.split('-')[0]) + 1);
  await waitFor('the clock past `from`', () => Date.now() > from.getTime());
  const old: string[] = [];
  for (let i = 0; i < 3; i += 1) old.push(await postGp(geohook, 'esriJobFailed'));
  await waitFor('those handed over to the others', () => yardstick.counts.size === 4);

  t.equal(await registry.create({ name: 'replay', types: ['gp.*'] }, { origin: 'runtime', from }), 'created');
  const replay = await workersOf(t, prefix, 'replay');
  const fresh: string[] = [];
  for (let i = 0; i < 3; i += 1) fresh.push(await postGp(geohook, 'esriJobSucceeded'));
  await waitFor('the new events handed to the others', () => yardstick.counts.size === 7);
  await waitFor('the catch-up to join the others', async () => (await connection.hget(fanoutKey(prefix), 'catchup:sub:replay')) === null);
  await settled(t, prefix, ['yardstick', 'replay']);
  t.same(replay.ids, sorted([...old, ...fresh]), 'the events since `from`, then the new ones');
  t.notOk(replay.counts.has(early), 'not the event before `from`');
  t.same(replay.repeated, [], 'each once');
});

t.test('a subscription without readers keeps at most its backlog cap and counts what it dropped; another is unaffected', async (t) => {
  const { prefix, geohooks } = await receivers(t, 1, {
    subscriptions: [
      { name: 'capped', types: ['gp.*'], backlog: { count: 5 } },
      { name: 'roomy', types: ['gp.*'] },
    ],
  });
  const connection = connect(t);
  const registry = new SubscriptionRegistry(connection, prefix);
  const queueOf = (name: string): Queue => {
    const queue = new Queue(`sub-${name}`, { connection, prefix });
    t.teardown(() => queue.close());
    return queue;
  };
  const capped = queueOf('capped');
  const roomy = queueOf('roomy');
  const acknowledged: string[] = [];
  let mostWaiting = 0;
  for (let i = 0; i < 20; i += 1) {
    acknowledged.push(await postGp(geohooks[0]!, 'esriJobSucceeded'));
    mostWaiting = Math.max(mostWaiting, await capped.getWaitingCount());
  }
  await waitFor('every event in the roomy subscription', async () => (await roomy.getWaitingCount()) === 20);
  const status = await waitFor('the capped subscription to have dropped 15', async () => {
    const found = (await readSubscriptionStatus(connection, prefix, registry, DEFAULT_BACKLOG)).find(({ name }) => name === 'capped');
    return found?.dropped === 15 && found;
  });
  t.equal(await capped.getWaitingCount(), 5, 'five waiting');
  t.ok(mostWaiting <= 5, `never more than five waiting (at most ${mostWaiting})`);
  t.match(status, { waiting: 5, dropped: 15, backlog: { count: 5 } }, 'its status');
  const kept = (await capped.getWaiting(0, -1)).map((job) => job.id!);
  t.same(sorted(kept), sorted(acknowledged.slice(15)), 'the newest five kept');
  const all = await readSubscriptionStatus(connection, prefix, registry, DEFAULT_BACKLOG);
  t.match(
    all.find(({ name }) => name === 'roomy'),
    { waiting: 20, dropped: 0 },
    'the roomy subscription holds all twenty',
  );
});

t.test('a BullMQ worker of its own on gp-events gets every event beside a running receiver and its event printer', async (t) => {
  const { prefix, geohooks } = await receivers(t, 1);
  // What `geohook up` runs beside the receiver: the printer follows the event log.
  const printed: string[] = [];
  const printerConnection = connect(t);
  const printer = tailEventLog({
    connection: printerConnection,
    prefix,
    logger: pino({ level: 'silent' }),
    onEvent: (event) => void printed.push(event.id),
  });
  t.teardown(() => printer.close());
  const taken: string[] = [];
  const worker = new Worker(
    'gp-events',
    async (job) => {
      taken.push((job.data as StoredEvent).id);
    },
    { connection: connect(t), prefix },
  );
  t.teardown(() => worker.close());
  await worker.waitUntilReady();
  await printer.ready;
  const acknowledged: string[] = [];
  for (let i = 0; i < 5; i += 1) acknowledged.push(await postGp(geohooks[0]!, 'esriJobSucceeded'));
  await waitFor('the worker to have every event', () => taken.length >= 5);
  await waitFor('the printer to have printed every event', () => printed.length >= 5);
  const gpEvents = new Queue('gp-events', { connection: connect(t), prefix });
  t.teardown(() => gpEvents.close());
  await waitFor('every job of gp-events done', async () => (await gpEvents.getJobCounts('waiting', 'active', 'completed')).completed === 5);
  t.same(sorted(taken), sorted(acknowledged), 'the worker took every event, once');
  t.same(printed, acknowledged, 'the printer showed every event, in order');
});

t.test("the event printer closes before its Redis ever answered (geohook up's Ctrl-C while it waits for Redis)", async (t) => {
  const down = await startRedis(t);
  await down.stop();
  const connection = new Redis(down.url, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  t.teardown(() => connection.disconnect());
  const printer = tailEventLog({ connection, prefix: uniquePrefix(), logger: pino({ level: 'silent' }), onEvent: () => undefined });
  await t.resolves(printer.close(), 'it closes');
});

t.test('a receiver is ready only once the subscriptions of its config are made, so none misses an acknowledged event', async (t) => {
  const prefix = uniquePrefix();
  const connection = connect(t);
  // Redis refuses to make them for now: the key of the subscriptions holds a value of another type.
  await connection.set(subscriptionsKey(prefix), 'in the way');
  const env = {
    GEOHOOK_PREFIX: prefix,
    HOOK_SECRETS: TEST_KEY,
    GEOHOOK_CONFIG: configFile(t, { subscriptions: [{ name: 'audit', types: ['gp.*'] }] }),
  };
  const geohook = await startGeohook(t, redis, env);
  t.strictSame(await geohook.readyz(), { status: 503, reason: 'the subscriptions of GEOHOOK_CONFIG are not made yet' });
  await connection.del(subscriptionsKey(prefix));
  await waitFor('ready', async () => (await geohook.readyz()).status === 200);
  t.match(await new SubscriptionRegistry(connection, prefix).list(), [{ name: 'audit', origin: 'config' }], 'made by then');
});

t.test('an age cap holds without traffic: events older than it are dropped and counted though no new event comes', async (t) => {
  const { prefix, geohooks } = await receivers(t, 1, { subscriptions: [{ name: 'stale', types: ['gp.*'], backlog: { ageSeconds: 1 } }] });
  const connection = connect(t);
  const registry = new SubscriptionRegistry(connection, prefix);
  for (let i = 0; i < 3; i += 1) await postGp(geohooks[0]!, 'esriJobSucceeded');
  const status = async () => (await readSubscriptionStatus(connection, prefix, registry, DEFAULT_BACKLOG))[0]!;
  await waitFor('the three handed over', async () => (await status()).waiting === 3);
  await waitFor('the three dropped once a second old', async () => (await status()).dropped === 3, { timeoutMs: 5000 });
  t.match(await status(), { waiting: 0, dropped: 3 });
});

t.test(
  'a worker of a subscription that does not exist is told so once it is ready; one of a subscription that exists is not',
  async (t) => {
    const prefix = uniquePrefix();
    await new SubscriptionRegistry(connect(t), prefix).create({ name: 'permits', types: ['gp.*'] }, { origin: 'runtime' });
    const warningsOf = async (name: string): Promise<string[]> => {
      const lines: string[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
      const subscription = subscribe({ connection: redis.url, prefix, subscription: name, logger, handlers: { '*': () => undefined } });
      t.teardown(() => subscription.close({ timeoutMs: 1000 }));
      await subscription.ready();
      return lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    };
    t.same(await warningsOf('permits'), [], 'an existing subscription: nothing said');
    t.match(await warningsOf('permit'), [
      /^no subscription "permit": nothing reaches its queue until it is made \(geohook subscriptions create permit/,
    ]);
  },
);
