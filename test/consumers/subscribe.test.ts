import { randomUUID } from 'node:crypto';
import { Queue, UnrecoverableError } from 'bullmq';
import { Registry } from 'prom-client';
import t, { type Test } from 'tap';
import { changeEventsQueueName, type ChangeEvent, type ChangeOp } from '../../src/changes/change-event.js';
import { subscribe, type Subscription } from '../../src/consumers/subscribe.js';
import type { AnyGeohookEvent, FeatureEvent, GpEvent, GpEventType } from '../../src/events/envelope.js';
import { sign } from '../../src/signature/sign.js';
import { envelopeOf } from '../helpers/envelope.js';
import { fixture } from '../helpers/paths.js';
import { configFile, startReceiver, TEST_KEY, type TestReceiver } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const fastRetry = { retry: { attempts: 3, backoff: { type: 'fixed', delayMs: 20, jitter: 0 } } };

/** A signed GP delivery with a job id of its own (distinct bytes, so never a duplicate). */
async function fireGp(receiver: TestReceiver, eventType = 'esriJobSucceeded'): Promise<string> {
  const body = JSON.stringify({
    serviceType: 'GPServer',
    jobId: `j${randomUUID()}`,
    statusURL: 'http://127.0.0.1:1/arcgis/rest/services/Tools/Buffer/GPServer/Buffer/jobs/x',
    name: 'hook',
    taskName: 'Buffer',
    folderName: 'Tools',
    serviceName: 'Buffer',
    events: [{ eventType, when: Date.now() }],
  });
  const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  if (response.status !== 202) throw new Error(`receiver answered ${response.status}`);
  return ((await response.json()) as { id: string }).id;
}

async function fireFixture(receiver: TestReceiver, name: string): Promise<string> {
  const body = fixture(name);
  const response = await receiver.post(body, { 'x-service': sign(TEST_KEY, body) });
  return ((await response.json()) as { id: string }).id;
}

function start(t: Test, receiver: TestReceiver, options: Omit<Parameters<typeof subscribe>[0], 'connection' | 'prefix'>): Subscription {
  const subscription = subscribe({ connection: redis.url, prefix: receiver.prefix, ...options });
  t.teardown(() => subscription.close({ timeoutMs: 1000 }));
  return subscription;
}

async function counterValue(registry: Registry, labels: Record<string, string>): Promise<number> {
  const metric = (await registry.getSingleMetric('geohook_events_consumed_total')!.get()).values;
  return metric
    .filter((value) => Object.entries(labels).every(([key, expected]) => value.labels[key] === expected))
    .reduce((sum, value) => sum + value.value, 0);
}

t.test('a handler gets the typed events of its pattern, and only those', async (t) => {
  const receiver = await startReceiver(t, redis);
  const succeeded: GpEventType[] = [];
  const everything: string[] = [];
  const subscription = start(t, receiver, {
    handlers: {
      'gp.job.succeeded': (event: GpEvent) => {
        succeeded.push(event.type);
      },
      '*': (event: AnyGeohookEvent) => {
        everything.push(event.family === 'gp' ? `gp:${event.type}` : event.type);
      },
    },
  });
  t.same(subscription.queues, ['gp-events', 'feature-events', 'unknown-events']);
  await fireGp(receiver, 'esriJobSucceeded');
  await fireGp(receiver, 'esriJobFailed');
  await fireFixture(receiver, 'enterprise-feature-created.json');
  await waitFor('three events', async () => everything.length === 3);
  t.same(succeeded, ['gp.job.succeeded']);
  t.same(everything.sort(), ['feature.FeaturesCreated', 'gp:gp.job.failed', 'gp:gp.job.succeeded']);
});

t.test('a pattern only consumes the queue it can match', async (t) => {
  const receiver = await startReceiver(t, redis);
  const seen: FeatureEvent[] = [];
  const subscription = start(t, receiver, { handlers: { 'feature.*': (event) => void seen.push(event) } });
  t.same(subscription.queues, ['feature-events']);
  await fireGp(receiver);
  await fireFixture(receiver, 'enterprise-feature-created.json');
  await waitFor('the feature event', async () => seen.length === 1);
  t.equal(seen[0]!.service.serviceName, 'ServiceName');
  const gpWaiting = await receiver.app.eventQueue.queue('gp-events').getWaitingCount();
  t.equal(gpWaiting, 1, 'the GP event is left for a GP consumer');
});

t.test('a delivery reporting several types reaches every matching handler once', async (t) => {
  const receiver = await startReceiver(t, redis);
  const calls: string[] = [];
  start(t, receiver, {
    handlers: {
      'feature.FeaturesCreated': () => void calls.push('created'),
      'feature.FeaturesUpdated': () => void calls.push('updated'),
      'feature.*': (event) => void calls.push(`any:${event.types.join('+')}`),
      'gp.*': () => void calls.push('gp'),
    },
  });
  const id = await fireFixture(receiver, 'agol-multi-event.json');
  const queue = receiver.app.eventQueue.queue('feature-events');
  await waitFor('the event to be consumed', async () => (await queue.getJobState(id)) === 'completed');
  t.same(calls, ['created', 'updated', 'any:feature.FeaturesCreated+feature.FeaturesUpdated']);
});

t.test('a failed handler is retried with backoff, and handlers that succeeded are not run again', async (t) => {
  const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, fastRetry) });
  const calls: string[] = [];
  const registry = new Registry();
  start(t, receiver, {
    metrics: registry,
    handlers: {
      'gp.*': () => void calls.push('first'),
      'gp.job.succeeded': (_event, { attempt }) => {
        calls.push(`second#${attempt}`);
        if (attempt < 3) throw new Error('not yet');
      },
    },
  });
  const id = await fireGp(receiver);
  const queue = receiver.app.eventQueue.queue('gp-events');
  await waitFor('completion', async () => (await queue.getJobState(id)) === 'completed');
  t.same(calls, ['first', 'second#1', 'second#2', 'second#3']);
  t.equal(await counterValue(registry, { outcome: 'retried' }), 2);
  t.equal(await counterValue(registry, { outcome: 'completed', type: 'gp.job.succeeded' }), 1);
});

/** A handler that throws `error` on every call, and how many calls it got. */
function alwaysThrowing(error: Error): { handler: () => never; attempts: () => number } {
  let attempts = 0;
  return {
    handler: () => {
      attempts += 1;
      throw error;
    },
    attempts: () => attempts,
  };
}

/** Waits until the GP event `id` is in the failed set; returns its queue. */
async function failedIn(receiver: TestReceiver, id: string): Promise<Queue> {
  const queue = receiver.app.eventQueue.queue('gp-events');
  await waitFor('the failed set', async () => (await queue.getJobState(id)) === 'failed');
  return queue;
}

t.test('an event whose attempts are used up stays in the failed set', async (t) => {
  const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, fastRetry) });
  const registry = new Registry();
  const failing = alwaysThrowing(new Error('downstream is down'));
  start(t, receiver, { metrics: registry, handlers: { 'gp.*': failing.handler } });
  const id = await fireGp(receiver);
  const queue = await failedIn(receiver, id);
  const job = (await queue.getJob(id))!;
  t.equal(failing.attempts(), 3);
  t.equal(job.attemptsMade, 3);
  t.equal(job.failedReason, 'downstream is down');
  t.equal(await counterValue(registry, { outcome: 'failed' }), 1);
});

t.test('UnrecoverableError from a handler fails the event at once', async (t) => {
  const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, fastRetry) });
  const failing = alwaysThrowing(new UnrecoverableError('bad job id'));
  start(t, receiver, { handlers: { 'gp.*': failing.handler } });
  await failedIn(receiver, await fireGp(receiver));
  t.equal(failing.attempts(), 1);
});

t.test('a poison event (not a geohook envelope) fails at once without reaching a handler', async (t) => {
  const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, fastRetry) });
  const registry = new Registry();
  const seen: string[] = [];
  start(t, receiver, { metrics: registry, handlers: { '*': (event) => void seen.push(event.id) } });
  const queue = new Queue('gp-events', { connection: { host: '127.0.0.1', port: redis.port }, prefix: receiver.prefix });
  t.teardown(() => queue.close());
  const garbage = await queue.add('gp.job.succeeded', { hello: 'world' }, { attempts: 5 });
  const misplaced = await queue.add('feature.FeaturesCreated', envelopeOf('feature'), { attempts: 5 });
  await waitFor(
    'both failed',
    async () => (await queue.getJobState(garbage.id!)) === 'failed' && (await queue.getJobState(misplaced.id!)) === 'failed',
  );
  t.equal((await queue.getJob(garbage.id!))!.attemptsMade, 1, 'no retry');
  t.match((await queue.getJob(garbage.id!))!.failedReason, /^poison event: id/);
  t.match((await queue.getJob(misplaced.id!))!.failedReason, /a feature event in the gp queue/);
  t.same(seen, []);
  t.equal(await counterValue(registry, { outcome: 'poison' }), 2);
});

t.test('handlers get payload and rawBody from every stored form: JSON, form, base64 bytes and the form geohook 0.1 stored', async (t) => {
  const receiver = await startReceiver(t, redis, { GEOHOOK_CONFIG: configFile(t, fastRetry) });
  const seen = new Map<string, { payload: unknown; rawBody: string }>();
  start(t, receiver, { handlers: { '*': (event) => void seen.set(event.hook, { payload: event.payload, rawBody: event.rawBody }) } });
  const queue = new Queue('gp-events', { connection: { host: '127.0.0.1', port: redis.port }, prefix: receiver.prefix });
  t.teardown(() => queue.close());
  const json = envelopeOf('gp', 'json', '\ufeff{"n":1}');
  const form = {
    ...envelopeOf('gp', 'form', 'payload=%7B%22n%22%3A2%7D'),
    contentType: 'application/x-www-form-urlencoded',
    payload: { payload: { n: 2 } },
  };
  const bytes = Buffer.from('{"n":"\xff"}', 'latin1');
  const binary = { ...envelopeOf('gp', 'binary'), bodyEncoding: 'base64' as const, body: bytes.toString('base64') };
  const { bodyEncoding: _encoding, body: _body, ...fields } = envelopeOf('gp', 'earlier');
  const earlier = { ...fields, payload: { n: 4 }, rawBody: Buffer.from('{"n":4}').toString('base64') };
  const bad = envelopeOf('gp', 'bad', 'not json');
  for (const data of [json, form, binary, earlier, bad]) await queue.add(data.type, data, { jobId: data.hook });
  await waitFor('four handled, one failed', async () => seen.size === 4 && (await queue.getJobState('bad')) === 'failed');
  t.same(seen.get('json'), { payload: { n: 1 }, rawBody: Buffer.from('\ufeff{"n":1}').toString('base64') }, 'JSON: parsed past its BOM');
  t.same(
    seen.get('form'),
    { payload: { payload: { n: 2 } }, rawBody: Buffer.from(form.body).toString('base64') },
    'form: the stored payload',
  );
  t.same(seen.get('binary'), { payload: { n: '\ufffd' }, rawBody: bytes.toString('base64') }, 'bytes that are not UTF-8: kept exactly');
  t.same(seen.get('earlier'), { payload: { n: 4 }, rawBody: earlier.rawBody }, 'an event stored by geohook 0.1');
  t.match((await queue.getJob('bad'))!.failedReason, /^poison event: body: not JSON/);
});

t.test('close() waits for the handlers that are running', async (t) => {
  const receiver = await startReceiver(t, redis);
  let finished = false;
  let started = false;
  const subscription = subscribe({
    connection: redis.url,
    prefix: receiver.prefix,
    handlers: {
      'gp.*': async () => {
        started = true;
        await new Promise((resolve) => setTimeout(resolve, 300));
        finished = true;
      },
    },
  });
  const id = await fireGp(receiver);
  await waitFor('the handler to start', async () => started);
  await subscription.close();
  t.ok(finished, 'the running handler finished before close resolved');
  t.equal(await receiver.app.eventQueue.queue('gp-events').getJobState(id), 'completed');
});

t.test('close() gives up on a stuck handler after its timeout', async (t) => {
  const receiver = await startReceiver(t, redis);
  let started = false;
  const subscription = subscribe({
    connection: redis.url,
    prefix: receiver.prefix,
    handlers: {
      'gp.*': async () => {
        started = true;
        await new Promise(() => undefined);
      },
    },
  });
  await fireGp(receiver);
  await waitFor('the handler to start', async () => started);
  // The handler never settles: a close that waited for it would never return, and the test would end at tap's limit.
  await subscription.close({ timeoutMs: 200 });
  t.pass('close returned');
});

t.test('invalid handlers are refused with a configuration error', async (t) => {
  t.throws(() => subscribe({ connection: redis.url, handlers: {} }), { code: 'GEOHOOK_ERR_CONFIG' });
  t.throws(() => subscribe({ connection: redis.url, handlers: { 'jobs.*': () => undefined } as never }), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /jobs\.\*/,
  });
  t.throws(() => subscribe({ connection: redis.url, handlers: { 'gp.$': () => undefined } }), { code: 'GEOHOOK_ERR_CONFIG' });
  t.throws(() => subscribe({ connection: redis.url, handlers: { 'gp.*': 'nope' as never } }), { code: 'GEOHOOK_ERR_CONFIG' });
  t.throws(() => subscribe({ connection: redis.url, concurrency: 0, handlers: { 'gp.*': () => undefined } }), {
    code: 'GEOHOOK_ERR_CONFIG',
  });
});

t.test('a change handler with `changed` takes only the updates of those fields', async (t) => {
  const prefix = `changed-${randomUUID()}`;
  const queue = new Queue(changeEventsQueueName, { connection: { url: redis.url }, prefix });
  t.teardown(() => queue.close());
  const event = (id: string, op: ChangeOp, changedFields?: string[]): ChangeEvent => ({
    id,
    type: op === 'c' ? 'change.created' : op === 'd' ? 'change.deleted' : 'change.updated',
    op,
    hook: 'hook',
    service: { serviceName: 'Parcels', serviceType: 'FeatureServer', url: 'http://127.0.0.1:1/arcgis/rest/services/Parcels/FeatureServer' },
    layer: { id: 0, name: 'Parcels' },
    key: { objectId: 1 },
    after: op === 'd' ? null : { attributes: { objectid: 1, status: 'Closed' } },
    ...(changedFields === undefined ? {} : { changedFields }),
    source: { origin: 'webhook', serverGens: [1, 2], transaction: { id: 'tx', index: 0, total: 1 } },
    ts: new Date().toISOString(),
  });
  const all: string[] = [];
  const status: string[] = [];
  const subscription = subscribe({
    connection: redis.url,
    prefix,
    handlers: {
      'change.*': async (change) => void all.push(change.id),
      'change.updated': { changed: ['status', 'owner'], handler: async (change) => void status.push(change.id) },
    },
  });
  t.teardown(() => subscription.close());
  for (const change of [
    event('created', 'c'),
    event('status', 'u', ['status']),
    event('area', 'u', ['area']),
    event('unknown', 'u'),
    event('moved', 'u', []),
    event('owner', 'u', ['area', 'owner']),
    event('deleted', 'd'),
  ])
    await queue.add(change.type, change, { jobId: change.id });
  await waitFor('every change event consumed', async () => (await queue.getJobCounts('completed')).completed === 7);
  t.equal(all.length, 7, 'the plain handler takes every change event');
  t.same(status.sort(), ['owner', 'status'], 'the updates of status or owner, nothing else');

  for (const [handlers, message] of [
    [{ 'change.*': { changed: [], handler: async () => undefined } }, /changed is a list of field names/],
    [{ 'gp.*': { changed: ['status'], handler: async () => undefined } }, /takes change events only/],
    [{ 'change.*': { changed: ['status'] } }, /not a function/],
  ] as const)
    t.throws(() => subscribe({ connection: redis.url, prefix, handlers: handlers as never }), { message });
});
