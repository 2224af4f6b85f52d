import { Queue } from 'bullmq';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import pino from 'pino';
import t from 'tap';
import { createServiceLocator } from '../../../src/arcgis/service-locator.js';
import { trustedUrls } from '../../../src/arcgis/trusted-urls.js';
import { startBackfill } from '../../../src/backfill/backfill-worker.js';
import { buildEvent } from '../../../src/events/build-event.js';
import { backfillQueueName } from '../../../src/queue/names.js';
import { connectRedis } from '../../../src/redis/connection.js';
import { watermarksKey } from '../../../src/redis/keys.js';
import { editParcels, PARCELS } from '../../helpers/edits.js';
import { startEmulator } from '../../helpers/emulator.js';
import { startEventQueue } from '../../helpers/event-queue.js';
import { startRedis } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait.js';
import { replayFromEnvironment } from './helpers/replay.js';

/**
 * Issue 33's payload-origin property: signed feature deliveries whose `changesUrl` names random origins, and
 * near misses of the trusted ones, are accepted, but geohook sends a request (a read, a token, a password) to
 * none of them; and no watermark passes the generation the server really has. The receiver's queue and the
 * backfill worker run as `geohook serve` runs them, the emulator as the GIS server; every request the worker
 * makes goes through a fetch that records it.
 */
replayFromEnvironment();
const RUNS = 300;

const redis = await startRedis(t);
const emulator = await startEmulator(t);
const trustedElsewhere = 'https://gis2.example.com/arcgis/';
const serviceLocator = createServiceLocator({
  adminUrl: emulator.baseUrl,
  pinned: { hook: 'default', services: [PARCELS] },
  trusted: [trustedElsewhere],
});
const { eventQueue, prefix, connection } = await startEventQueue(t, redis);
const allowed = trustedUrls([`${emulator.url}/arcgis/`, trustedElsewhere]);

const requested: string[] = [];
/** Requests that carried a credential (a token in the query or the form, or an authorization header). */
const credentialed: string[] = [];
const carriesCredential = (url: string, init?: RequestInit): boolean => {
  const headers = new Headers(init?.headers);
  const form = typeof init?.body === 'string' || init?.body instanceof URLSearchParams ? String(init.body) : '';
  return (
    new URL(url).searchParams.has('token') ||
    /(^|&)token=/.test(form) ||
    headers.has('authorization') ||
    headers.has('x-esri-authorization')
  );
};
/** The other trusted server, at generation 0: whatever is announced of it stays ahead, and is refused. */
const elsewhere = (): Response =>
  Response.json({ token: 't', layers: [{ id: 0 }], changeTrackingInfo: { layerServerGens: [{ id: 0, serverGen: 0 }] }, edits: [] });
const recording: typeof fetch = async (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  requested.push(url);
  if (carriesCredential(url, init)) credentialed.push(url);
  if (url.startsWith(emulator.url)) return fetch(input, init);
  if (new URL(url).origin === new URL(trustedElsewhere).origin) return elsewhere();
  throw new TypeError('fetch failed');
};
const workerConnection = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
const worker = startBackfill({
  connection: workerConnection,
  prefix,
  eventQueue,
  auth: { username: 'admin', password: 'admin.pass', tokenUrl: `${emulator.baseUrl}/generateToken` },
  serviceLocator,
  logger: pino({ level: 'silent' }),
  fetch: recording,
  confirmation: { intervalMs: 50, refuseAfterMs: 300 },
});
t.teardown(async () => {
  await worker.close(true);
  workerConnection.disconnect();
});

const host = (origin: string): string => new URL(origin).host;
/** The trusted origins themselves, random ones, and spellings that look like a trusted one. */
const originArb = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(emulator.url, 'https://gis2.example.com') },
  fc.webUrl({ withFragments: false, withQueryParameters: false }).map((url) => new URL(url).origin),
  fc.constantFrom(
    `http://${host(emulator.url)}@evil.test`,
    `http://${host(emulator.url)}.evil.test`,
    `http://evil.test/${emulator.url}`,
    `http://user:pw@${host(emulator.url)}`,
    'https://gis2.example.com.evil.test',
    'https://gis2.example.com:444',
    'http://gis2.example.com',
    'http://127.0.0.1:1',
    'http://[::1]:80',
    'http://localhost',
  ),
);
const pathArb = fc.constantFrom(
  '/arcgis/rest/services/Hosted/Parcels/FeatureServer',
  '/arcgis/rest/services/../../evil/Hosted/Parcels/FeatureServer',
  '/ARCGIS/rest/services/Hosted/Parcels/FeatureServer',
  '/server/rest/services/Hosted/Parcels/FeatureServer',
  '/arcgisevil/rest/services/Hosted/Parcels/FeatureServer',
);
const caseArb = fc.record({
  origin: originArb,
  path: pathArb,
  serviceName: fc.constantFrom('Parcels', 'Roads', 'Other_1'),
  from: fc.oneof(fc.nat({ max: 50 }), fc.constant(9_007_199_254_740_000)),
  span: fc.nat({ max: 5 }),
  encoded: fc.boolean(),
});

t.test(
  `${RUNS} signed deliveries naming random or near-miss origins: none receives a request, no watermark passes the server`,
  async (t) => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const url = `${c.origin}${c.path}/extractChanges?serverGens=[${c.from},${c.from + c.span}]`;
        const payload = {
          serviceType: 'FeatureServer',
          changesUrl: c.encoded ? encodeURIComponent(url) : url,
          folderName: 'Hosted',
          serviceName: c.serviceName,
          events: [{ eventType: 'FeaturesCreated', when: (n += 1) }],
        };
        const raw = Buffer.from(JSON.stringify(payload));
        await eventQueue.enqueue(
          buildEvent({ raw, hook: 'default', contentType: 'application/json', verified: true, classified: payload }, serviceLocator),
        );
      }),
      { numRuns: RUNS },
    );
    // A service on the other trusted server alone in its scope: that server is read for it.
    const elsewhereOnly = {
      serviceType: 'FeatureServer',
      changesUrl: `${trustedElsewhere}rest/services/Hosted/Elsewhere/FeatureServer/extractChanges?serverGens=[1,2]`,
      folderName: 'Hosted',
      serviceName: 'Elsewhere',
      events: [{ eventType: 'FeaturesCreated', when: 0 }],
    };
    const bytes = Buffer.from(JSON.stringify(elsewhereOnly));
    await eventQueue.enqueue(
      buildEvent(
        { raw: bytes, hook: 'default', contentType: 'application/json', verified: true, classified: elsewhereOnly },
        serviceLocator,
      ),
    );
    // Real edits too, so that the server's generation moves and confirmations have something to confirm.
    const last = Math.max(await editParcels(emulator, 'FeaturesCreated', true), await editParcels(emulator, 'FeaturesUpdated', true));
    const backfill = new Queue(backfillQueueName, { connection, prefix });
    t.teardown(() => backfill.close());
    await waitFor(
      'the backfill queue idle',
      async () => {
        const counts = await backfill.getJobCounts('waiting', 'active', 'delayed');
        return Object.values(counts).every((count) => count === 0);
      },
      { timeoutMs: 30_000 },
    );

    // Beyond the trusted URLs, only the result files the trusted server's own answers named (its storage path),
    // read without any credential.
    const named = (url: string): boolean => url.startsWith(`${emulator.url}/emulator/storage/`);
    const strays = requested.filter((url) => !allowed.trusts(new URL(url)) && !named(url));
    t.same(strays, [], `${requested.length} requests, every one to a trusted URL or a result the server named`);
    t.same(
      credentialed.filter((url) => !allowed.trusts(new URL(url))),
      [],
      'a credential went to trusted URLs only',
    );
    t.ok(
      requested.some((url) => url.startsWith(emulator.url)),
      'the worker did read the trusted server',
    );
    t.ok(
      requested.some((url) => url.startsWith('https://gis2.example.com/')),
      'and tried the other trusted one',
    );
    const redisClient = new Redis(redis.url);
    t.teardown(() => redisClient.disconnect());
    const marks = Object.entries(await redisClient.hgetall(watermarksKey(prefix)));
    t.ok(
      marks.every(([, mark]) => Number(mark) <= last),
      `no watermark past the server's generation ${last}: ${JSON.stringify(marks)}`,
    );
  },
);
