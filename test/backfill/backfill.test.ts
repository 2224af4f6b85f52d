import { createHash } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import t, { type Test } from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { startBackfill, type BackfillOptions } from '../../src/backfill/backfill-worker.js';
import { checkGenerations } from '../../src/backfill/generation-check.js';
import { validateEvent } from '../../src/consumers/validate-event.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { buildEvent } from '../../src/events/build-event.js';
import type { GeohookEvent } from '../../src/events/envelope.js';
import type { GapJobData } from '../../src/queue/accept-script.js';
import type { EventQueue } from '../../src/queue/event-queue.js';
import { longJobOptions, longJobWorkerOptions } from '../../src/queue/long-jobs.js';
import { backfillQueueName } from '../../src/queue/names.js';
import { connectRedis } from '../../src/redis/connection.js';
import { coverage, editParcels, PARCELS } from '../helpers/edits.js';
import { startEmulator } from '../helpers/emulator.js';
import { startEventQueue } from '../helpers/event-queue.js';
import { registrationEnv, startGeohook, webhooksOf } from '../helpers/geohook.js';
import { answerWith, startSink } from '../helpers/http-sink.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { serviceReports } from '../helpers/service-reports.js';
import { waitFor } from '../helpers/wait.js';

// About 40 s of receivers, workers and their timers alone on two cores: past tap's minute on a loaded machine.
t.setTimeout(2 * 60_000);
const redis = await startRedis(t);

/** geohook's backfill worker with the credentials of the emulator at `emulatorUrl`, which it trusts, and a connection of its own, closed at teardown. */
function backfillWorker(t: Test, emulatorUrl: string, options: Pick<BackfillOptions, 'prefix' | 'eventQueue' | 'fetch'>) {
  const connection = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
  const worker = startBackfill({
    connection,
    auth: { username: 'admin', password: 'admin.pass', tokenUrl: `${emulatorUrl}/arcgis/admin/generateToken` },
    serviceLocator: createServiceLocator({ adminUrl: `${emulatorUrl}/arcgis/admin` }),
    logger: pino({ level: 'silent' }),
    ...options,
  });
  t.teardown(async () => {
    await worker.close();
    connection.disconnect();
  });
  return worker;
}

/** The feature events of a queue, oldest range first. */
async function featureEvents(eventQueue: EventQueue): Promise<GeohookEvent[]> {
  const jobs = await eventQueue.queue('feature-events').getJobs();
  const events = jobs.map((job) => validateEvent(job.data, 'feature'));
  return events.sort((a, b) => a.changes!.serverGens[0] - b.changes!.serverGens[0]);
}

t.test('edits whose deliveries were lost on the way are backfilled when the next delivery arrives', async (t) => {
  const emulator = await startEmulator(t);
  const geohook = await startGeohook(t, redis, registrationEnv(emulator, [PARCELS], uniquePrefix()));
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const { eventQueue } = geohook.server.app;

  const delivered = await editParcels(emulator, 'FeaturesCreated');
  await waitFor('the first edit received', async () => (await featureEvents(eventQueue)).length === 1);
  const lost = [await editParcels(emulator, 'FeaturesUpdated', true), await editParcels(emulator, 'FeaturesCreated', true)];
  const last = await editParcels(emulator, 'FeaturesDeleted');
  const events = await waitFor('both deliveries and the backfilled range', async () => {
    const all = await featureEvents(eventQueue);
    return all.length === 3 ? all : undefined;
  });

  t.same(
    events.map((event) => event.source),
    ['webhook', 'backfill', 'webhook'],
  );
  const [first, backfilled, next] = events as [GeohookEvent, GeohookEvent, GeohookEvent];
  t.same(backfilled.changes?.serverGens, [delivered, lost[1]], 'the range between the deliveries');
  t.same(backfilled.types, ['feature.FeaturesCreated', 'feature.FeaturesUpdated'], 'the change types extractChanges found');
  t.match(backfilled, { family: 'feature', hook: 'default', verified: false, service: { folderName: 'Hosted', serviceName: 'Parcels' } });
  t.match(backfilled.payload, { serviceType: 'FeatureServer', name: 'geohook-backfill', folderName: 'Hosted', serviceName: 'Parcels' });
  t.equal(backfilled.id, createHash('sha256').update(Buffer.from(backfilled.rawBody, 'base64')).digest('hex'), 'id: SHA-256 of its bytes');
  t.equal(first.changes?.serverGens[1], delivered);
  t.equal(next.changes?.serverGens[0], lost[1], 'deliveries chain: the next starts at the last lost edit');
  for (const gen of [delivered, ...lost, last]) t.equal(coverage(events, gen), 1, `edit ${gen} is in exactly one range`);
});

t.test(
  'geohook down, 20 edits, its webhook deactivated: started again, it reactivates the webhook and hands every edit over once',
  async (t) => {
    const emulator = await startEmulator(t, { secondsToMs: (seconds) => seconds * 20 });
    await emulator.admin('services/webhooks/settings', { notificationAttempts: '1', numberOfFailures: '3', daysInPast: '1' }, 'orgadmin');
    const alerts = await startSink(t, answerWith(200));
    const prefix = uniquePrefix();
    const env = {
      ...registrationEnv(emulator, [PARCELS], prefix),
      PORT: String(await findFreePort()),
      ALERT_URL: `${alerts.url}/alerts`,
    };
    const first = await startGeohook(t, redis, env);
    await waitFor('registered', async () => (await first.readyz()).status === 200);
    const before = await editParcels(emulator, 'FeaturesCreated');
    await waitFor('the edit received', async () => (await featureEvents(first.server.app.eventQueue)).length === 1);
    await first.stop();

    const changeTypes = ['FeaturesCreated', 'FeaturesUpdated', 'FeaturesDeleted'];
    const missed: number[] = [];
    for (let n = 0; n < 20; n += 1) missed.push(await editParcels(emulator, changeTypes[n % 3]!));
    await waitFor('the webhook deactivated', async () => (await webhooksOf(emulator, PARCELS))[0]?.active === false);

    const second = await startGeohook(t, redis, env);
    await waitFor('the webhook active again', async () => (await webhooksOf(emulator, PARCELS))[0]?.active === true);
    const events = await waitFor('the missed edits backfilled', async () => {
      const all = await featureEvents(second.server.app.eventQueue);
      return all.length === 2 ? all : undefined;
    });
    t.same(
      events.map((event) => event.source),
      ['webhook', 'backfill'],
    );
    // extractChanges reports net changes: each feature created, updated and deleted in the range drops out; the last one created stays.
    t.same(events[1]!.types, ['feature.FeaturesCreated']);
    for (const gen of [before, ...missed]) t.equal(coverage(events, gen), 1, `edit ${gen} is in exactly one range`);
    const after = await editParcels(emulator, 'FeaturesUpdated');
    const all = await waitFor('the next edit delivered', async () => {
      const now = await featureEvents(second.server.app.eventQueue);
      return now.length === 3 ? now : undefined;
    });
    t.equal(all[2]!.source, 'webhook');
    t.equal(coverage(all, after), 1, 'delivered again once active');
    const sent = await waitFor('the recovered alert', () => {
      const bodies = alerts.received.map((request) => JSON.parse(request.body.toString()) as Record<string, unknown>);
      return bodies.some((body) => body.event === 'webhook.recovered') && bodies;
    });
    const kinds = sent.map((body) => body.event);
    t.ok(kinds.indexOf('webhook.deactivated') < kinds.indexOf('webhook.recovered'), `deactivated, then recovered: ${kinds.join(', ')}`);
    t.ok(kinds.indexOf('gap.backfilled') < kinds.indexOf('webhook.recovered'), 'recovered once the gap was backfilled');
    t.match(
      sent.find((body) => body.event === 'webhook.deactivated'),
      { service: PARCELS, text: /deactivated the webhook on Hosted\/Parcels/, at: String },
    );
    t.match(
      sent.find((body) => body.event === 'gap.backfilled'),
      { service: `default ${PARCELS}`, serverGens: [before, missed.at(-1)], types: ['FeaturesCreated'] },
    );
    const metrics = await (await fetch(`${second.url}/metrics`)).text();
    t.match(metrics, `geohook_upstream_webhook_active{service="${PARCELS}"} 1`);
    t.match(metrics, `geohook_upstream_deactivations{service="${PARCELS}"} 1`);
    const [report] = await serviceReports(redis.url, prefix);
    t.match(
      report,
      {
        service: PARCELS,
        mode: 'webhook',
        webhook: { active: true, deactivations: 1, deactivatedAt: String, recoveredAt: String },
        lastDeliveryAt: String,
        watermark: after,
        lastBackfillAt: String,
      },
      'the services view tells the story',
    );
  },
);

t.test('deliveries refused while Redis was away are backfilled as soon as it is back, not an interval later', async (t) => {
  const own = await startRedis(t, { appendOnly: true, appendFsync: 'always' });
  const emulator = await startEmulator(t, { secondsToMs: (seconds) => seconds * 20 });
  await emulator.admin('services/webhooks/settings', { notificationAttempts: '1', numberOfFailures: '10', daysInPast: '1' }, 'orgadmin');
  const geohook = await startGeohook(t, own, registrationEnv(emulator, [PARCELS], uniquePrefix()));
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const { eventQueue } = geohook.server.app;
  const before = await editParcels(emulator, 'FeaturesCreated');
  await waitFor('the first edit received', async () => (await featureEvents(eventQueue)).length === 1);

  await own.stop();
  const refused = [await editParcels(emulator, 'FeaturesUpdated'), await editParcels(emulator, 'FeaturesCreated')];
  await waitFor('the deliveries refused', async () => {
    const { deliveries } = (await (await fetch(`${emulator.url}/emulator/deliveries`)).json()) as { deliveries: { outcome: string }[] };
    return deliveries.length === 3 && deliveries.slice(1).every((delivery) => delivery.outcome === 'failed');
  });
  await own.start();
  const events = await waitFor('the refused edits backfilled', async () => {
    const all = await featureEvents(eventQueue);
    return all.length === 2 ? all : undefined;
  });
  t.same(
    events.map((event) => event.source),
    ['webhook', 'backfill'],
  );
  for (const gen of [before, ...refused]) t.equal(coverage(events, gen), 1, `edit ${gen} is in exactly one range`);
});

t.test('a failed extractChanges is retried with backoff until the range is backfilled', async (t) => {
  const emulator = await startEmulator(t);
  const serviceLocator = createServiceLocator({ adminUrl: emulator.baseUrl });
  const { eventQueue, connection, prefix } = await startEventQueue(t, redis);
  let refused = 0;
  const flaky: typeof fetch = (input, init) => (refused++ < 2 ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init));
  backfillWorker(t, emulator.url, { prefix, eventQueue, fetch: flaky });

  // Deliveries as the server would send them for the first and last of three edits; the middle one never came.
  const gens = [await editParcels(emulator, 'FeaturesCreated', true), await editParcels(emulator, 'FeaturesCreated', true)];
  const last = await editParcels(emulator, 'FeaturesCreated', true);
  const delivery = (from: number, to: number) => {
    const payload = {
      serviceType: 'FeatureServer',
      changesUrl: `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=%5B${from},${to}%5D`,
      folderName: 'Hosted',
      serviceName: 'Parcels',
      events: [{ eventType: 'FeaturesCreated', when: to }],
    };
    const raw = Buffer.from(JSON.stringify(payload));
    return buildEvent({ raw, hook: 'default', contentType: 'application/json', verified: true, classified: payload }, serviceLocator);
  };
  // The server's generation as the registration pass would have read it: the deliveries count at once.
  const scope = `default ${PARCELS}`;
  const serviceUrl = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  await eventQueue.confirm('default', [{ scope, from: last, to: last, serviceUrl }]);
  await eventQueue.enqueue(delivery(gens[0]! - 1, gens[0]!));
  await eventQueue.enqueue(delivery(gens[1]!, last));
  const backfilled = await waitFor('the backfilled range', async () =>
    (await featureEvents(eventQueue)).find((event) => event.source === 'backfill'),
  );
  t.same(backfilled.changes?.serverGens, [gens[0], gens[1]]);
  t.same(backfilled.types, ['feature.FeaturesCreated']);
  t.equal(refused, 2 + 6, 'once it worked: the token, the service, the extractChanges job, its status twice, its result');
  const gaps = new Queue(backfillQueueName, { connection, prefix });
  t.teardown(() => gaps.close());
  const [gap] = await gaps.getJobs(['completed']);
  t.equal(gap?.attemptsMade, 3, 'two failed tries, then the one that worked');
});

t.test('the current generations set the first watermarks, per layer on ArcGIS Online, and a later check records the gap', async (t) => {
  const emulator = await startEmulator(t);
  const { eventQueue, connection, prefix } = await startEventQueue(t, redis);
  const auth = { username: 'admin', password: 'admin.pass', tokenUrl: `${emulator.baseUrl}/generateToken` };
  const online = {
    eventQueue,
    hook: 'default',
    adminUrl: `${emulator.url}/geohookOrg/ArcGIS/rest/admin`,
    auth: { ...auth, tokenUrl: `${emulator.url}/sharing/rest/generateToken` },
  };
  const enterprise = { eventQueue, hook: 'default', adminUrl: emulator.baseUrl, auth };
  const edits = async (layerId: number, count: number) => {
    let gen = 0;
    for (let n = 0; n < count; n += 1)
      gen = ((await emulator.control(`services/${PARCELS}/edits`, { layerId, lose: true })).body.serverGens as number[])[1]!;
    return gen;
  };
  const layer0 = await edits(0, 2);
  const layer1 = await edits(1, 1);
  t.same(
    (await checkGenerations('Parcels.FeatureServer', online)).map(({ scope, to }) => [scope, to]),
    [
      ['default Parcels.FeatureServer#0', layer0],
      ['default Parcels.FeatureServer#1', layer1],
    ],
  );
  t.same(
    (await checkGenerations(PARCELS, enterprise)).map(({ scope, to }) => [scope, to]),
    [['default Hosted/Parcels.FeatureServer', layer1]],
  );
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  t.same(await raw.hgetall(`${prefix}:watermarks`), {
    'default Parcels.FeatureServer#0': String(layer0),
    'default Parcels.FeatureServer#1': String(layer1),
    'default Hosted/Parcels.FeatureServer': String(layer1),
  });
  t.same(await checkGenerations('Roads.FeatureServer', enterprise), [], 'no change tracking: nothing to keep');

  const later = await edits(1, 3);
  await checkGenerations('Parcels.FeatureServer', online);
  const gaps = new Queue(backfillQueueName, { connection, prefix });
  t.teardown(() => gaps.close());
  t.same(
    (await gaps.getJobs(['waiting'])).map((job) => job.data),
    [
      {
        scope: 'default Parcels.FeatureServer#1',
        hook: 'default',
        serviceUrl: `${emulator.url}/geohookOrg/ArcGIS/rest/services/Parcels/FeatureServer`,
        from: String(layer1),
        to: String(later),
      },
    ],
    'one gap, on the layer edited since',
  );
});

/** A gap job for the last of two edits of the emulator's parcels, waiting on a fresh event queue's backfill queue. */
async function waitingGap(t: Test) {
  const emulator = await startEmulator(t);
  const { eventQueue, connection, prefix } = await startEventQueue(t, redis);
  const from = (await editParcels(emulator, 'FeaturesCreated', true)) - 1;
  const to = await editParcels(emulator, 'FeaturesCreated', true);
  const gaps = new Queue<GapJobData>(backfillQueueName, { connection, prefix });
  t.teardown(() => gaps.close());
  const data = {
    scope: `default ${PARCELS}`,
    hook: 'default',
    serviceUrl: `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`,
    from: String(from),
    to: String(to),
  };
  const gap = await gaps.add('gap', data, longJobOptions);
  return { emulator, eventQueue, prefix, gaps, gap, from, to };
}

t.test('a gap whose workers stopped mid-fill twice is filled by the next one, not failed as stalled', async (t) => {
  const { emulator, eventQueue, prefix, gaps, gap, from, to } = await waitingGap(t);

  // Two workers in turn take the gap and stop without finishing it (their lock lapses); a third, checking for
  // stalled jobs with geohook's limit, hands it back each time.
  const workerConnection = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
  t.teardown(() => workerConnection.disconnect());
  const checker = new Worker(backfillQueueName, undefined, {
    connection: workerConnection,
    prefix,
    autorun: false,
    stalledInterval: 50,
    maxStalledCount: longJobWorkerOptions.maxStalledCount,
  });
  for (const stop of [1, 2]) {
    const dying = new Worker(backfillQueueName, undefined, { connection: workerConnection, prefix, autorun: false, lockDuration: 100 });
    t.equal((await dying.getNextJob(`dying-${stop}`))?.id, gap.id, `stop ${stop}: the gap taken`);
    await dying.close(true);
    if (stop === 1) await checker.startStalledCheckTimer();
    await waitFor(`stop ${stop}: handed back`, async () => (await gaps.getJobState(gap.id!)) === 'waiting');
    // Over the limit, BullMQ hands a stalled job back marked to fail when it is next taken.
    t.notOk((await gaps.getJob(gap.id!))?.deferredFailure, `stop ${stop}: not marked to fail`);
  }
  await checker.close();

  const worker = backfillWorker(t, emulator.url, { prefix, eventQueue });
  t.equal(worker.opts.maxStalledCount, longJobWorkerOptions.maxStalledCount, "geohook's worker checks stalled gaps with that limit");
  const [event] = await waitFor('the range backfilled', async () => {
    const events = await featureEvents(eventQueue);
    return events.length === 1 ? events : undefined;
  });
  t.same(event?.changes?.serverGens, [from, to]);
  t.same(event?.types, ['feature.FeaturesCreated']);
});

t.test("a gap whose receiver died mid-fill is filled by another within seconds, not after BullMQ's 30-s lock", async (t) => {
  const { emulator, eventQueue, prefix, gaps, gap, from, to } = await waitingGap(t);
  // A receiver's backfill worker takes the gap and dies mid-fill: nothing renews or releases its lock.
  const dying = backfillWorker(t, emulator.url, { prefix, eventQueue, fetch: () => new Promise<never>(() => undefined) });
  await waitFor('the gap taken', async () => (await gaps.getJobState(gap.id!)) === 'active');
  await dying.close(true);

  backfillWorker(t, emulator.url, { prefix, eventQueue });
  // Within the lock, the check interval and the fill; BullMQ's defaults would take 30 to 60 s.
  const [event] = await waitFor(
    'the range backfilled',
    async () => {
      const events = await featureEvents(eventQueue);
      return events.length === 1 ? events : undefined;
    },
    { timeoutMs: 28_000 },
  );
  t.same(event?.changes?.serverGens, [from, to]);
});

/** A fetch that records the URL of every request, and answers those `answer` returns a body for itself. */
function recordingFetch(answer: (url: URL) => unknown = () => undefined) {
  const urls: URL[] = [];
  const recorded: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    urls.push(url);
    const body = answer(url);
    return body === undefined ? fetch(input, init) : Promise.resolve(Response.json(body));
  };
  return { fetch: recorded, urls, extractChanges: () => urls.filter((url) => url.pathname.endsWith('/extractChanges')) };
}

/** A gap on the emulator's parcels holding an add, an update and a delete (on two layers), waiting on a fresh queue. */
async function gapOfEveryChange(t: Test) {
  const emulator = await startEmulator(t);
  const { eventQueue, connection, prefix } = await startEventQueue(t, redis);
  const edit = async (changeType: string, layerId: number) =>
    (await emulator.control(`services/${PARCELS}/edits`, { changeType, layerId, lose: true })).body.serverGens as [number, number];
  await edit('FeaturesCreated', 0);
  await edit('FeaturesCreated', 1);
  const [from] = await edit('FeaturesUpdated', 0);
  await edit('FeaturesDeleted', 1);
  const [, to] = await edit('FeaturesCreated', 0);
  const gaps = new Queue<GapJobData>(backfillQueueName, { connection, prefix });
  t.teardown(() => gaps.close());
  const serviceUrl = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  await gaps.add('gap', { scope: `default ${PARCELS}`, hook: 'default', serviceUrl, from: String(from), to: String(to) }, longJobOptions);
  return { emulator, eventQueue, connection, prefix, from, to };
}

t.test('a gap is read as ids only, in an asynchronous job, and its adds, updates and deletes are all found', async (t) => {
  const { emulator, eventQueue, prefix, from, to } = await gapOfEveryChange(t);
  const recording = recordingFetch();
  backfillWorker(t, emulator.url, { prefix, eventQueue, fetch: recording.fetch });
  const [event] = await waitFor('the range backfilled', async () => {
    const events = await featureEvents(eventQueue);
    return events.length === 1 ? events : undefined;
  });
  t.same(event?.types, ['feature.FeaturesCreated', 'feature.FeaturesUpdated', 'feature.FeaturesDeleted']);
  const asked = recording.extractChanges().map((url) => Object.fromEntries(url.searchParams));
  t.same(
    asked,
    [{ serverGens: `[${from},${to}]`, layers: '[0,1]', async: 'true', returnIdsOnly: 'true' }],
    'once, ids only, asynchronously',
  );
  t.ok(
    recording.urls.some((url) => url.pathname.startsWith('/emulator/storage/')),
    "the job's result read",
  );
  const changesUrl = new URL(event!.changes!.url);
  t.same(
    Object.fromEntries(changesUrl.searchParams),
    { serverGens: `[${from},${to}]`, layers: '[0,1]' },
    "the event's changesUrl gives the features",
  );
});

t.test('issue 51 (N7): a gap whose job the server names on another host fails for good, and that host is never asked', async (t) => {
  const { emulator, eventQueue, connection, prefix } = await gapOfEveryChange(t);
  const recording = recordingFetch((url) =>
    url.pathname.endsWith('/extractChanges')
      ? { statusUrl: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' }
      : undefined,
  );
  backfillWorker(t, emulator.url, { prefix, eventQueue, fetch: recording.fetch });
  const gaps = new Queue<GapJobData>(backfillQueueName, { connection, prefix });
  t.teardown(() => gaps.close());
  const [failed] = await waitFor('the gap failed', async () => {
    const jobs = await gaps.getJobs(['failed']);
    return jobs.length === 1 ? jobs : undefined;
  });
  t.equal(failed?.attemptsMade, 1, 'not retried');
  t.match(
    failed?.failedReason,
    /^http:\/\/169\.254\.169\.254\/latest\/meta-data\/iam\/security-credentials\/, named by an answer of .*: no request was sent$/,
  );
  t.notOk(
    recording.urls.some((url) => url.hostname === '169.254.169.254'),
    'nothing was sent there',
  );
  t.strictSame(await featureEvents(eventQueue), [], 'no event');
});

t.test('an ids-only answer with no id is checked once in full: a server answering ids only with empty lists loses no edit', async (t) => {
  const { emulator, eventQueue, prefix, from, to } = await gapOfEveryChange(t);
  const empty = { layerServerGens: [], edits: [0, 1].map((id) => ({ id, objectIds: { adds: [], updates: [], deletes: [] } })) };
  const recording = recordingFetch((url) => (url.searchParams.get('returnIdsOnly') === 'true' ? empty : undefined));
  backfillWorker(t, emulator.url, { prefix, eventQueue, fetch: recording.fetch });
  const [event] = await waitFor('the range backfilled', async () => {
    const events = await featureEvents(eventQueue);
    return events.length === 1 ? events : undefined;
  });
  t.same(event?.changes?.serverGens, [from, to]);
  t.same(event?.types, ['feature.FeaturesCreated', 'feature.FeaturesUpdated', 'feature.FeaturesDeleted'], 'found by the full answer');
  t.same(
    recording.extractChanges().map((url) => url.searchParams.get('returnIdsOnly')),
    ['true', null],
    'ids only, then once without',
  );
});
