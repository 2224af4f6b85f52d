import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { startBackfill, type ConfirmationTiming } from '../../src/backfill/backfill-worker.js';
import { findFreePort } from '../../src/embedded/redis-server.js';
import { buildEvent } from '../../src/events/build-event.js';
import type { EventQueue } from '../../src/queue/event-queue.js';
import { backfillQueueName } from '../../src/queue/names.js';
import { connectRedis } from '../../src/redis/connection.js';
import { aheadKey, serverGensKey, watermarksKey } from '../../src/redis/keys.js';
import { sign } from '../../src/signature/sign.js';
import { editParcels, PARCELS } from '../helpers/edits.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startEventQueue } from '../helpers/event-queue.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { capturingLogger } from '../helpers/log-capture.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// Issue 51 (security review 2, N3): a leaked hook key must not turn geohook into an amplifier against the GIS server.
t.setTimeout(3 * 60_000);

const KEY = 'amplifier-test-hook-key-AAAAAAAAAAAA';
const INVENTED = 50;

const redis = await startRedis(t);

/** Warning lines (pino level 40) among `lines`, counted by message. */
function warningsByMessage(lines: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) {
    const entry = JSON.parse(line) as { level: number; msg: string };
    if (entry.level === 40) counts.set(entry.msg, (counts.get(entry.msg) ?? 0) + 1);
  }
  return counts;
}

t.test(
  'issue 51: signed deliveries for invented services cost the GIS server no read, and one warning per cause; a real edit is still confirmed',
  async (t) => {
    const emulator = await startEmulator(t);
    const prefix = uniquePrefix();
    const env = { ...registrationEnv(emulator, [PARCELS], prefix), HOOK_SECRETS: KEY, PORT: String(await findFreePort()) };
    const geohook = await startGeohook(t, redis, env);
    await waitFor('registered', async () => (await geohook.readyz()).status === 200);
    const raw = new Redis(redis.url);
    t.teardown(() => raw.disconnect());
    const backfill = new Queue(backfillQueueName, { connection: raw, prefix });
    t.teardown(() => backfill.close());
    const scope = `default ${PARCELS}`;
    const first = await editParcels(emulator, 'FeaturesCreated');
    await waitFor('the first real edit confirmed', async () => Number(await raw.hget(watermarksKey(prefix), scope)) === first);

    const logFrom = geohook.log().split('\n').length;
    const requestsFrom = emulator.requests.length;
    for (let i = 0; i < INVENTED; i += 1) {
      const body = JSON.stringify({
        serviceType: 'FeatureServer',
        changesUrl: `${emulator.url}/arcgis/rest/services/Hosted/Inv${i}/FeatureServer/extractChanges?serverGens=[1,2]`,
        name: 'geohook',
        folderName: 'Hosted',
        serviceName: `Inv${i}`,
        events: [{ eventType: 'FeaturesCreated', when: i }],
      });
      const response = await fetch(`${geohook.url}/webhooks/default`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-esriHook-Signature': sign(KEY, body) },
        body,
      });
      t.equal(response.status, 202, `invented service ${i} accepted`);
    }

    // A real edit on the registered service, made after the flood: its range is confirmed, not starved.
    const real = await editParcels(emulator, 'FeaturesUpdated');
    await waitFor('the real edit confirmed', async () => Number(await raw.hget(watermarksKey(prefix), scope)) === real, {
      timeoutMs: 30_000,
    });
    // Nothing left that could still read: no range waiting, no confirm job pending.
    await waitFor(
      'every invented range settled',
      async () => {
        const counts = await backfill.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return (await raw.hlen(aheadKey(prefix))) === 0 && Object.values(counts).every((count) => count === 0);
      },
      { timeoutMs: 90_000 },
    );

    const requests = emulator.requests.slice(requestsFrom);
    t.same(
      requests.filter((request) => request.includes('/Inv')),
      [],
      'no request for an invented service',
    );
    t.ok(requests.filter((request) => request.includes('findServices')).length <= 1, 'at most one catalogue read');
    const lines = geohook.log().split('\n').slice(logFrom).filter(Boolean);
    const warnings = warningsByMessage(lines);
    for (const [message, count] of warnings) t.ok(count <= 1, `one warning per cause: ${count} × "${message}"`);
    t.ok(
      lines.some((line) => line.includes('"level":40') && line.includes('Inv')),
      'the invented services were warned about',
    );
  },
);

/** An event queue and a backfill worker on it (no catalogue: every trusted service is read), its log captured. */
async function backfillOn(t: Test, emulator: TestEmulator, confirmation: ConfirmationTiming = {}) {
  const { eventQueue, prefix } = await startEventQueue(t, redis);
  const serviceLocator = createServiceLocator({ adminUrl: emulator.baseUrl, pinned: { hook: 'default', services: [PARCELS] } });
  const { logger, lines } = capturingLogger('info');
  const connection = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
  const worker = startBackfill({
    connection,
    prefix,
    eventQueue,
    auth: { username: 'admin', password: 'admin.pass', tokenUrl: `${emulator.baseUrl}/generateToken` },
    serviceLocator,
    logger,
    confirmation,
  });
  t.teardown(async () => {
    await worker.close(true);
    connection.disconnect();
  });
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  /** Enqueues a signed delivery of `serviceName` whose changesUrl names `urlService`'s REST resource. */
  const deliver = (serviceName: string, serverGens: [number, number], urlService = serviceName) => {
    const payload = {
      serviceType: 'FeatureServer',
      changesUrl: `${emulator.url}/arcgis/rest/services/Hosted/${urlService}/FeatureServer/extractChanges?serverGens=[${serverGens.join(',')}]`,
      folderName: 'Hosted',
      serviceName,
      events: [{ eventType: 'FeaturesCreated', when: serverGens[1] }],
    };
    const raw = Buffer.from(JSON.stringify(payload));
    return eventQueue.enqueue(
      buildEvent({ raw, hook: 'default', contentType: 'application/json', verified: true, classified: payload }, serviceLocator),
    );
  };
  const settled = (what: string, timeoutMs = 15_000) => waitFor(what, async () => (await raw.hlen(aheadKey(prefix))) === 0, { timeoutMs });
  return { eventQueue: eventQueue as EventQueue, prefix, raw, lines, deliver, settled };
}

t.test('issue 51: a service its server says is not there is read once per scope; its ranges are refused at once', async (t) => {
  const emulator = await startEmulator(t);
  const q = await backfillOn(t, emulator);
  const from = emulator.requests.length;
  for (const serverGens of [
    [1, 2],
    [2, 3],
    [3, 4],
  ] as [number, number][]) {
    await q.deliver('Gone', serverGens);
    // The default refusal comes a minute after delivery: settling sooner shows the 404 refused the range at once.
    await q.settled(`the range (${serverGens.join(', ')}] refused`);
  }
  t.equal(emulator.requests.slice(from).filter((request) => request.includes('/Gone/')).length, 1, 'one read, then remembered');
  t.same(await q.raw.hgetall(watermarksKey(q.prefix)), {}, 'no watermark');
  const warnings = warningsByMessage(q.lines);
  t.same([...warnings.values()], [1], `one warning: ${[...warnings.keys()].join(', ')}`);
});

t.test('issue 51: scopes invented for a real service share its reads: one per interval, not one per scope', async (t) => {
  const emulator = await startEmulator(t);
  const q = await backfillOn(t, emulator, { intervalMs: 500, refuseAfterMs: 2000 });
  const from = emulator.requests.length;
  for (let i = 0; i < 30; i += 1) await q.deliver(`Fake${i}`, [9e15, 9e15 + 1], 'Parcels');
  await q.settled('the ranges ahead of Parcels refused');
  const reads = emulator.requests.slice(from).filter((request) => request.includes('/Parcels/FeatureServer'));
  // Each scope is read every 500 ms for 2 s: 150 reads unshared, about 5 shared.
  t.ok(reads.length <= 10, `${reads.length} reads of the real service for 30 scopes`);
  t.same([...warningsByMessage(q.lines).values()], [1], 'one warning for the 30 refusals');
});

t.test('issue 51: past 1,000 scopes waiting, a scope whose server was never read waits for nothing and costs no read', async (t) => {
  const emulator = await startEmulator(t);
  const { eventQueue, prefix } = await startEventQueue(t, redis);
  const serviceLocator = createServiceLocator({ adminUrl: emulator.baseUrl });
  const raw = new Redis(redis.url);
  t.teardown(() => raw.disconnect());
  const backfill = new Queue(backfillQueueName, { connection: raw, prefix });
  t.teardown(() => backfill.close());
  const waiting: string[] = [];
  for (let i = 0; i < 1000; i += 1) waiting.push(`default Hosted/Waiting${i}.FeatureServer`, `5\t6\t${emulator.url}/x\t\t${Date.now()}\t`);
  await raw.hset(aheadKey(prefix), ...waiting);
  const url = (name: string) => `${emulator.url}/arcgis/rest/services/Hosted/${name}/FeatureServer`;
  await raw.hset(serverGensKey(prefix), `default ${PARCELS}`, `10\t${url('Parcels')}`);
  const deliver = (serviceName: string) => {
    const payload = {
      serviceType: 'FeatureServer',
      changesUrl: `${url(serviceName)}/extractChanges?serverGens=[20,21]`,
      folderName: 'Hosted',
      serviceName,
      events: [{ eventType: 'FeaturesCreated', when: 1 }],
    };
    const bytes = Buffer.from(JSON.stringify(payload));
    return eventQueue.enqueue(
      buildEvent({ raw: bytes, hook: 'default', contentType: 'application/json', verified: true, classified: payload }, serviceLocator),
    );
  };
  await deliver('Invented');
  t.equal(await raw.hexists(aheadKey(prefix), 'default Hosted/Invented.FeatureServer'), 0, 'the invented scope does not wait');
  t.same(
    (await backfill.getJobs(['waiting', 'delayed'])).map((job) => job.data.scope),
    [],
    'and no confirm job reads it',
  );
  await deliver('Parcels');
  t.equal(await raw.hexists(aheadKey(prefix), `default ${PARCELS}`), 1, 'a scope whose server was read still waits');
  t.same(
    (await backfill.getJobs(['waiting', 'delayed'])).map((job) => job.data.scope),
    [`default ${PARCELS}`],
    'for its confirm job',
  );
});

t.test('a range delivered after the last read of its server is confirmed by a new read, not after the interval', async (t) => {
  const emulator = await startEmulator(t);
  // An interval no test waits out: a confirmation that waited for it would never come.
  const q = await backfillOn(t, emulator, { intervalMs: 3_600_000, spacingMs: 10 });
  const scope = `default ${PARCELS}`;
  const first = await editParcels(emulator, 'FeaturesCreated', true);
  await q.deliver('Parcels', [first - 1, first]);
  await waitFor('the first range confirmed', async () => Number(await q.raw.hget(watermarksKey(q.prefix), scope)) === first);
  for (const changeType of ['FeaturesUpdated', 'FeaturesDeleted']) {
    const from = Number(await q.raw.hget(watermarksKey(q.prefix), scope));
    const to = await editParcels(emulator, changeType, true);
    await q.deliver('Parcels', [from, to]);
    await waitFor(`the ${changeType} range confirmed`, async () => Number(await q.raw.hget(watermarksKey(q.prefix), scope)) === to);
  }
  t.equal(await q.raw.hlen(aheadKey(q.prefix)), 0, 'no range waits');
});
