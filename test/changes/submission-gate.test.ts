import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { SubmissionPart } from '../../src/changes/submission-parts.js';
import { SubmissionStore } from '../../src/changes/submission-store.js';
import { changesPendingKey, changesResolvedKey, submissionsHeldInKey, watermarksKey } from '../../src/redis/keys.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';

// A submission closes only once the resolver has resolved the edits that could still belong to it (issue 55: with
// the resolver lagging, parents closed by their window or their Survey123 webhook without their inspections).

const redis = await startRedis(t);
const client = new Redis(redis.url);
t.teardown(() => client.quit());

const SCOPE = 'default Hosted/Parcels.FeatureServer';
const GLOBAL_ID = '{A3E0C4B2-0000-4000-8000-000000000001}';
const WINDOW_MS = 100;
const LEASE_MS = 30_000;

const parent: SubmissionPart = {
  submission: 's1',
  field: 'parent',
  json: JSON.stringify({ layer: { id: 0, name: 'Parcels' }, key: { objectId: 1, globalId: GLOBAL_ID } }),
  parentOf: `default\n${GLOBAL_ID}`,
};
const photo: SubmissionPart = { submission: 's1', field: 'a:0:1', json: JSON.stringify({ id: 1, layer: 0 }) };
const inspection: SubmissionPart = {
  submission: 's1',
  field: 'r:1:{77B2}',
  json: JSON.stringify({ layer: { id: 1, name: 'Inspections' }, key: { objectId: 31 } }),
};

/**
 * A store on a scope resolved up to 10 whose watermark is at 12, the range (10, 12] held by a stand-in of the
 * resolver (a receiver killed while resolving it: its lease has not run out).
 */
async function lagging(t: Test) {
  const prefix = uniquePrefix();
  t.teardown(async () => {
    const keys = await client.keys(`${prefix}:*`);
    if (keys.length > 0) await client.del(...keys);
  });
  await client.hset(watermarksKey(prefix), SCOPE, '12');
  await client.hset(changesResolvedKey(prefix), SCOPE, '12');
  await client.hset(changesPendingKey(prefix), SCOPE, `10\t12\t${Date.now()}\twebhook`);
  const release = async () => client.hdel(changesPendingKey(prefix), SCOPE);
  return { store: new SubmissionStore(client, prefix), prefix, release };
}

t.test('a window that passed while the range holding the inspections is unresolved: held, then closed with every part', async (t) => {
  const { store, prefix, release } = await lagging(t);
  await store.record([parent, photo], SCOPE, WINDOW_MS, 1000);
  t.same(await store.claim(1050, LEASE_MS, 10), [], 'the window has not passed');
  t.same(await store.claim(2000, LEASE_MS, 10), [], 'the window passed, but the range that may hold its inspections is unresolved');
  t.same(
    await client.zrange(submissionsHeldInKey(prefix, SCOPE), '0', '-1', 'WITHSCORES'),
    ['s1', '12'],
    'held until its scope is resolved to 12',
  );
  t.same(await store.claim(3000, LEASE_MS, 10), [], 'still held: nothing asks again per submission until its scope moves');
  // The resolver resolves the range: the inspection recorded (its own window), the claim released.
  await store.record([inspection], SCOPE, WINDOW_MS, 3100);
  await release();
  t.same(await store.claim(3150, LEASE_MS, 10), [], 'the window of its last part still runs');
  t.same(await store.claim(3300, LEASE_MS, 10), ['s1']);
  const parts = await store.read('s1');
  t.equal(parts.related.length, 1, 'the inspection is in it');
  t.equal(parts.attachments.length, 1, 'the photo is in it');
});

t.test('the gate is the watermark when the submission became due: edits after it do not hold it', async (t) => {
  const { store, prefix } = await lagging(t);
  await store.record([parent, photo], SCOPE, WINDOW_MS, 1000);
  t.same(await store.claim(2000, LEASE_MS, 10), [], 'held');
  // The resolver takes the next range while new edits keep moving the watermark.
  await client.hset(watermarksKey(prefix), SCOPE, '20');
  await client.hset(changesPendingKey(prefix), SCOPE, `12\t20\t${Date.now()}\twebhook`);
  t.same(await store.claim(2100, LEASE_MS, 10), ['s1'], 'resolved up to 12, its gate: closed');
});

t.test('a Survey123 webhook that came before the resolver resolved its edits: closed once it has', async (t) => {
  const { store, release } = await lagging(t);
  const ref: SubmissionPart = {
    submission: 's1',
    field: 'ref',
    json: ['default', 'Hosted/Parcels.FeatureServer', 0, 1, GLOBAL_ID, '2026-11-27T06:03:04.120Z'].join('\t'),
    parentOf: `default\n${GLOBAL_ID}`,
  };
  await store.record([ref], SCOPE, WINDOW_MS, 1000);
  t.equal(await store.closeBySurvey123('default', GLOBAL_ID, 1100), 'closed');
  t.same(await store.claim(1100, LEASE_MS, 10), [], 'held: its inspections may be in the range being resolved');
  await release();
  t.same(await store.claim(1200, LEASE_MS, 10), ['s1']);
  t.ok((await store.read('s1')).survey123);
});

t.test('a submission held past the longest hold (a scope no longer followed) closes with what it has', async (t) => {
  const { store } = await lagging(t);
  await store.record([parent, photo], SCOPE, WINDOW_MS, 1000);
  t.same(await store.claim(2000, LEASE_MS, 10), []);
  t.same(await store.claim(2000 + 300_000, LEASE_MS, 10), ['s1']);
});
