import { Redis } from 'ioredis';
import t from 'tap';
import { buildEvent } from '../../src/events/build-event.js';
import { dedupDigest } from '../../src/queue/job-script.js';
import { aheadKey, dedupKey } from '../../src/redis/keys.js';
import { accepted, envelopeOf } from '../helpers/envelope.js';
import { delivery, enterprise, PARCELS, rangedQueue, SERVICE_URL, serviceLocator } from '../helpers/ranged-queue.js';
import { startRedis } from '../helpers/redis.js';

const redis = await startRedis(t);
const raw = new Redis(redis.url);
t.teardown(() => raw.disconnect());

const NEW = { duplicate: false, spooled: false };
const REPEAT = { duplicate: true, spooled: false };

t.test(
  'a signed feature event whose ranges count at once keeps no dedup key: its ranges answer a repeat, also once the watermark moved past',
  async (t) => {
    const q = await rangedQueue(t, redis.url, raw);
    const first = delivery(enterprise(10, 11));
    t.same(await q.eventQueue.enqueue(first), NEW);
    t.same(await q.dedupKeys(), [], 'no dedup key');
    t.same(await q.eventQueue.enqueue(first), REPEAT, 'the same bytes again: a repeat');
    t.same(await q.eventQueue.enqueue(delivery(enterprise(11, 15))), NEW);
    t.same(await q.eventQueue.enqueue(first), REPEAT, 'once the watermark moved past it: a repeat');
    t.equal(await q.featureJobs(), 2);
    t.same(await q.dedupKeys(), []);
  },
);

t.test(
  'a range waiting for its server keeps no dedup key while it waits or once it counts; when it is refused, the key is written then',
  async (t) => {
    const q = await rangedQueue(t, redis.url, raw, 10);
    const counted = delivery(enterprise(10, 12));
    const refused = delivery(enterprise(500, 600));
    t.same(await q.eventQueue.enqueue(counted), NEW);
    t.same(await q.eventQueue.enqueue(refused), NEW);
    t.same(await q.dedupKeys(), [], 'no dedup key while they wait');
    t.same(await q.eventQueue.enqueue(counted), REPEAT, 'a repeat of a range waiting: a repeat');
    const read = { scope: PARCELS, from: 20, to: 20, serviceUrl: SERVICE_URL };
    t.same(await q.eventQueue.confirm('default', [read], Date.now() + 1), { ahead: 0, refused: [[500, 600]] });
    t.same(await q.watermarks(), { [PARCELS]: '12' }, 'the first counted');
    t.same(await q.eventQueue.enqueue(counted), REPEAT, 'counted: its ranges answer');
    const [key, ...more] = await raw.keysBuffer(`${dedupKey(q.prefix, '')}*`);
    t.same(more, []);
    t.same(key, Buffer.concat([Buffer.from(dedupKey(q.prefix, '')), dedupDigest('default', refused.event.id)]), "the refused one's key");
    const ttl = await raw.pttl(key!);
    t.ok(ttl > 0 && ttl <= 86_400_000, 'kept for the rest of the window');
    t.same(await q.eventQueue.enqueue(refused), REPEAT, 'refused: its dedup key answers');
    t.equal(await q.featureJobs(), 2);
  },
);

t.test('a range that cannot wait (the list of its scope full) keeps a dedup key', async (t) => {
  const q = await rangedQueue(t, redis.url, raw, 10);
  const full = Array.from({ length: 1000 }, (_, n) => `${2000 + n}\t${2001 + n}\t${SERVICE_URL}\t\t${Date.now()}`).join('\n');
  await raw.hset(aheadKey(q.prefix), PARCELS, full);
  const late = delivery(enterprise(100, 101));
  t.same(await q.eventQueue.enqueue(late), NEW);
  t.equal((await q.dedupKeys()).length, 1);
  t.same(await q.eventQueue.enqueue(late), REPEAT);
  t.equal(await q.featureJobs(), 1);
});

t.test('an Online array with one layer counted and one that cannot wait keeps a dedup key', async (t) => {
  const q = await rangedQueue(t, redis.url, raw, 10);
  const url = 'https://gis.example.com/server/rest/services/Trees/FeatureServer';
  const item = (layerId: number, from: number, to: number) => ({
    name: 'trees',
    layerId,
    orgId: 'Org1',
    serviceName: 'Trees',
    lastUpdatedTime: to,
    changesUrl: encodeURIComponent(`${url}/extractChanges?serverGens=[${from},${to}]`),
    events: ['FeaturesUpdated'],
  });
  await q.eventQueue.confirm('default', [{ scope: 'default Trees.FeatureServer#0', from: 50, to: 50, serviceUrl: url }]);
  const full = Array.from({ length: 1000 }, (_, n) => `${2000 + n}\t${2001 + n}\t${url}\t\t${Date.now()}`).join('\n');
  await raw.hset(aheadKey(q.prefix), 'default Trees.FeatureServer#1', full);
  const both = delivery([item(0, 5, 6), item(1, 100, 101)]);
  t.equal(both.ranges.length, 2);
  t.same(await q.eventQueue.enqueue(both), NEW);
  t.equal((await q.dedupKeys()).length, 1);
  t.same(await q.eventQueue.enqueue(both), REPEAT);
});

t.test('events whose ranges cannot show a repeat keep a dedup key: unsigned, without ranges, untrusted URL, GP', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  const { changesUrl: _, ...untracked } = enterprise(1, 2);
  const events = {
    unsigned: delivery(enterprise(10, 11), 'default', false),
    'no changesUrl': delivery(untracked),
    'untrusted URL': delivery(enterprise(12, 13, 13, 'https://evil.test/server/rest/services/Hosted/Parcels/FeatureServer')),
    gp: accepted(envelopeOf('gp')),
  };
  for (const [what, event] of Object.entries(events)) {
    t.same(event.ranges, [], `${what}: no ranges`);
    t.same(await q.eventQueue.enqueue(event), NEW, what);
    t.same(await q.eventQueue.enqueue(event), REPEAT, `${what}: a repeat`);
  }
  t.equal((await q.dedupKeys()).length, 4, 'a key each');
  t.same(await q.watermarks(), {});
});

t.test('a signed ArcGIS Online form body counts its ranges: no dedup key, a repeat answered by them', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  const payload = enterprise(20, 21);
  const body = `payload=${encodeURIComponent(JSON.stringify(payload))}&x-esriHook-Signature=sha256%3Dabc`;
  const form = () =>
    buildEvent(
      {
        raw: Buffer.from(body),
        hook: 'default',
        contentType: 'application/x-www-form-urlencoded',
        verified: true,
        formPayload: payload,
        classified: payload,
      },
      serviceLocator,
    );
  t.equal(form().ranges.length, 1);
  t.same(await q.eventQueue.enqueue(form()), NEW);
  t.same(await q.dedupKeys(), []);
  t.same(await q.eventQueue.enqueue(form()), REPEAT);
});

t.test('the same body on two hooks is stored on each, and a repeat on each is a repeat', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  const payload = enterprise(30, 31);
  t.same(await q.eventQueue.enqueue(delivery(payload, 'default')), NEW);
  t.same(await q.eventQueue.enqueue(delivery(payload, 'other')), NEW, 'another hook: its own watermark');
  t.same(await q.eventQueue.enqueue(delivery(payload, 'default')), REPEAT);
  t.same(await q.eventQueue.enqueue(delivery(payload, 'other')), REPEAT);
  t.equal(await q.featureJobs(), 2);
  t.same(await q.dedupKeys(), []);
});

t.test('a dedup key of the earlier layout still answers a repeat', async (t) => {
  const q = await rangedQueue(t, redis.url, raw);
  const event = envelopeOf('gp');
  await raw.set(`${q.prefix}:gp-events:de:default:${event.id}`, 1, 'PX', 60_000);
  t.same(await q.eventQueue.enqueue(accepted(event)), REPEAT);
  t.same(await q.eventQueue.enqueue(accepted(envelopeOf('gp'))), NEW, 'another event: new');
});

t.test('a dedup key is 16 bytes of digest after the prefix, kept for the window', async (t) => {
  const q = await rangedQueue(t, redis.url, raw, 1000, { dedupRetentionSeconds: 60 });
  const event = envelopeOf('unknown');
  t.same(await q.eventQueue.enqueue(accepted(event)), NEW);
  const key = Buffer.concat([Buffer.from(dedupKey(q.prefix, '')), dedupDigest('default', event.id)]);
  const ttl = await raw.pttl(key);
  t.ok(ttl > 0 && ttl <= 60_000, `PTTL ${ttl}`);
  t.not(dedupDigest('other', event.id).compare(dedupDigest('default', event.id)), 0, 'per hook');
});
