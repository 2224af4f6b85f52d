import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import t from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { RangeClaims } from '../../src/changes/range-claims.js';
import { buildEvent } from '../../src/events/build-event.js';
import { EventQueue } from '../../src/queue/event-queue.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import { changesOriginsKey } from '../../src/redis/keys.js';
import { repoPath } from '../helpers/paths.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);

const SERVICE_URL = 'https://gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer';
const SCOPE = 'default Hosted/Parcels.FeatureServer';
const serviceLocator = createServiceLocator({ trusted: ['https://gis.example.com'] });

/** A signed ArcGIS Enterprise delivery of the generations `(from, to]`. */
const delivery = (from: number, to: number) => {
  const payload = {
    serviceType: 'FeatureServer',
    changesUrl: `${SERVICE_URL}/extractChanges?serverGens=%5B${from},${to}%5D`,
    name: 'geohook',
    folderName: 'Hosted',
    serviceName: 'Parcels',
    events: [{ eventType: 'FeaturesCreated', when: to }],
  };
  const raw = Buffer.from(JSON.stringify(payload));
  return buildEvent({ raw, hook: 'default', contentType: 'application/json', verified: true, classified: payload }, serviceLocator);
};

t.test('each claimed range reached geohook one way: delivered, a gap, a gap a late delivery filled, polled', async (t) => {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  // Gaps a delivery reveals wait a minute for a late delivery to fill them.
  const eventQueue = new EventQueue({ connection, prefix, gapDelayMs: 60_000 });
  await eventQueue.ready();
  const raw = new Redis(redis.url);
  t.teardown(async () => {
    await eventQueue.close();
    connection.disconnect();
    raw.disconnect();
  });
  await eventQueue.confirm('default', [{ scope: SCOPE, from: 1000, to: 1000, serviceUrl: SERVICE_URL }]);
  const claims = new RangeClaims(raw, prefix);
  /** The next range claimed, released at once. */
  const next = async () => {
    const claimed = await claims.claim([SCOPE]);
    for (const range of claimed) await claims.release(range);
    return claimed.map(({ from, to, origin }) => [from, to, origin]);
  };

  await eventQueue.enqueue(delivery(100, 110));
  t.same(await next(), [], 'the first watermark starts the scope');
  await eventQueue.enqueue(delivery(120, 130));
  t.same(await next(), [[110, 120, 'backfill']], 'the gap the delivery revealed, found by the backfill');
  t.same(await next(), [[120, 130, 'webhook']], 'then the delivered range');

  await eventQueue.enqueue(delivery(140, 150));
  await eventQueue.enqueue(delivery(130, 140));
  t.same(await next(), [[130, 150, 'webhook']], 'a gap a late delivery filled before the claim is delivered too');

  await eventQueue.reserve('default', [{ scope: SCOPE, from: 160, to: 160, serviceUrl: SERVICE_URL, source: 'poll' }]);
  await eventQueue.reserve('default', [{ scope: SCOPE, from: 170, to: 170, serviceUrl: SERVICE_URL }]);
  await eventQueue.enqueue(delivery(170, 180));
  t.same(await next(), [[150, 160, 'poll']], 'what a poll found');
  t.same(await next(), [[160, 170, 'backfill']], 'what the start-up check found');
  const pending = await claims.claim([SCOPE]);
  t.same(
    pending.map(({ from, to, origin }) => [from, to, origin]),
    [[170, 180, 'webhook']],
  );
  t.same(await next(), [], 'one range of a scope at a time');
  t.same(
    (await claims.stale(-1)).map(({ from, to, origin }) => [from, to, origin]),
    [[170, 180, 'webhook']],
    'a stale claim keeps its origin',
  );
  await claims.release(pending[0]!);
  t.equal(await raw.hget(changesOriginsKey(prefix), SCOPE), null, 'the origins claimed are dropped');
});

t.test("change events' Redis scripts are .lua files: no module of src/changes/ holds a script of more than one line", async (t) => {
  const folder = repoPath('src', 'changes');
  const modules = readdirSync(folder).filter((file) => file.endsWith('.ts'));
  t.ok(modules.length > 10);
  // A template literal that spans lines and calls Redis: a script written in TypeScript.
  const inline = /`[^`]*\n[^`]*redis\.call\(/;
  t.same(
    modules.filter((file) => inline.test(readFileSync(`${folder}/${file}`, 'utf8'))),
    [],
  );
  for (const script of ['claim-ranges.lua', 'release-range.lua', 'write-previous.lua', 'clear-failed-range.lua'])
    t.match(readFileSync(`${folder}/${script}`, 'utf8'), /redis\.call\(/, script);
});
