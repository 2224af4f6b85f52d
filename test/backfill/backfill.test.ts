import { createHash } from 'node:crypto';
import { Queue } from 'bullmq';
import pino from 'pino';
import t from 'tap';
import { startBackfill } from '../../src/backfill/backfill-worker.js';
import { validateEvent } from '../../src/consumers/validate-event.js';
import type { GeohookEvent } from '../../src/queue/envelope.js';
import { EventQueue } from '../../src/queue/event-queue.js';
import { backfillQueueName } from '../../src/queue/names.js';
import { buildEvent } from '../../src/receiver/build-event.js';
import { connectRedis, createProducerConnection } from '../../src/redis/connection.js';
import { startEmulator, type TestEmulator } from '../helpers/emulator.js';
import { registrationEnv, startGeohook } from '../helpers/geohook.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const redis = await startRedis(t);
const PARCELS = 'Hosted/Parcels.FeatureServer';

/** Makes an edit of Parcels in the emulator; `lose`: the server keeps it but no delivery leaves. Returns its generation. */
async function edit(emulator: TestEmulator, changeType: string, lose = false): Promise<number> {
  const answer = await emulator.control(`services/${PARCELS}/edits`, { changeType, lose });
  if (answer.status !== 200) throw new Error(`edit ${changeType}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body.serverGens as [number, number])[1];
}

/** The feature events of a queue, oldest range first. */
async function featureEvents(eventQueue: EventQueue): Promise<GeohookEvent[]> {
  const jobs = await eventQueue.queue('feature-events').getJobs();
  const events = jobs.map((job) => validateEvent(job.data, 'feature'));
  return events.sort((a, b) => a.changes!.serverGens[0] - b.changes!.serverGens[0]);
}

/** How many events' ranges `(from, to]` hold generation `gen`. */
const coverage = (events: readonly GeohookEvent[], gen: number): number =>
  events.filter(({ changes }) => changes !== undefined && changes.serverGens[0] < gen && gen <= changes.serverGens[1]).length;

t.test('edits whose deliveries were lost on the way are backfilled when the next delivery arrives', async (t) => {
  const emulator = await startEmulator(t);
  const geohook = await startGeohook(t, redis, registrationEnv(emulator, [PARCELS], uniquePrefix()));
  await waitFor('registered', async () => (await geohook.readyz()).status === 200);
  const { eventQueue } = geohook.server.app;

  const delivered = await edit(emulator, 'FeaturesCreated');
  await waitFor('the first edit received', async () => (await featureEvents(eventQueue)).length === 1);
  const lost = [await edit(emulator, 'FeaturesUpdated', true), await edit(emulator, 'FeaturesCreated', true)];
  const last = await edit(emulator, 'FeaturesDeleted');
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

t.test('a failed extractChanges is retried with backoff until the range is backfilled', async (t) => {
  const emulator = await startEmulator(t);
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ connection, prefix });
  await eventQueue.ready();
  let refused = 0;
  const flaky: typeof fetch = (input, init) => (refused++ < 2 ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init));
  const workerConnection = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
  const worker = startBackfill({
    connection: workerConnection,
    prefix,
    eventQueue,
    auth: { username: 'admin', password: 'admin.pass' },
    logger: pino({ level: 'silent' }),
    fetch: flaky,
  });
  t.teardown(async () => {
    await worker.close();
    workerConnection.disconnect();
    await eventQueue.close();
    connection.disconnect();
  });

  // Deliveries as the server would send them for the first and last of three edits; the middle one never came.
  const gens = [await edit(emulator, 'FeaturesCreated', true), await edit(emulator, 'FeaturesCreated', true)];
  const last = await edit(emulator, 'FeaturesCreated', true);
  const delivery = (from: number, to: number) => {
    const payload = {
      serviceType: 'FeatureServer',
      changesUrl: `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer/extractChanges?serverGens=%5B${from},${to}%5D`,
      folderName: 'Hosted',
      serviceName: 'Parcels',
      events: [{ eventType: 'FeaturesCreated', when: to }],
    };
    const raw = Buffer.from(JSON.stringify(payload));
    return buildEvent({ raw, hook: 'default', contentType: 'application/json', verified: true, classified: payload });
  };
  await eventQueue.enqueue(delivery(gens[0]! - 1, gens[0]!));
  await eventQueue.enqueue(delivery(gens[1]!, last));
  const backfilled = await waitFor('the backfilled range', async () =>
    (await featureEvents(eventQueue)).find((event) => event.source === 'backfill'),
  );
  t.same(backfilled.changes?.serverGens, [gens[0], gens[1]]);
  t.same(backfilled.types, ['feature.FeaturesCreated']);
  t.equal(refused, 2 + 3, 'the token, the layers and extractChanges read once it worked');
  const gaps = new Queue(backfillQueueName, { connection, prefix });
  t.teardown(() => gaps.close());
  const [gap] = await gaps.getJobs(['completed']);
  t.equal(gap?.attemptsMade, 3, 'two failed tries, then the one that worked');
});
