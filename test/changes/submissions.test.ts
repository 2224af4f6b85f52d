import { applyEdits } from '@esri/arcgis-rest-feature-service';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { PARCELS } from '../helpers/edits.js';
import { countChanges, setUpParcelsChanges } from '../helpers/parcels-changes.js';
import { configFile } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { square } from '../helpers/square.js';
import { waitFor } from '../helpers/wait.js';

// change.submission (issue 55): one event per Survey123 submission, its parent, related rows and photos, closed by
// the Survey123 webhook once the portal vouched for its token, else by the service's quiet window.

const redis = await startRedis(t);

interface Submitted {
  parent: { objectId: number; globalId: string };
  related: { objectId: number; globalId: string }[];
  attachments: { id: number; sha256: string }[];
  webhook?: { status?: number };
}

const SUBMISSIONS = 'services/Hosted/Parcels.FeatureServer/submissions';

/** geohook on Parcels with photos in events and the submission window given, the emulator its portal. */
async function setUp(t: Test, submissionWindowMs: number) {
  const config = configFile(t, { changes: { [PARCELS]: { attachments: 'metadata', submissionWindowMs } } });
  const set = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: config });
  return { ...set, survey123Url: `${set.geohook.url}/webhooks/default/survey123` };
}

t.test('a submission closed by its window: one change.submission with the parent, both inspections and the four photos', async (t) => {
  const { emulator, events, submissions } = await setUp(t, 300);
  const { body } = await emulator.control(SUBMISSIONS, { photos: [{}, {}, {}, { on: 1 }] });
  const submitted = body as unknown as Submitted;
  const [submission] = await waitFor('a change.submission', () => submissions.length > 0 && submissions);
  t.match(submission, {
    type: 'change.submission',
    hook: 'default',
    key: { objectId: submitted.parent.objectId, globalId: submitted.parent.globalId },
    parent: { layer: { id: 0, name: 'Parcels' }, key: { globalId: submitted.parent.globalId } },
    closedBy: 'window',
  });
  t.same(
    submission!.related.map((row) => row.key.globalId),
    submitted.related.map((row) => row.globalId),
    'the two inspections, in object id order',
  );
  t.same(
    submission!.attachments.map((entry) => entry.sha256).sort(),
    submitted.attachments.map((entry) => entry.sha256).sort(),
    'the four photos, with the SHA-256 of the bytes uploaded',
  );
  await waitFor('the per-feature events', () => events.length >= 3);
  t.equal(events.length, 3, 'the per-feature events as they were: change.* does not take change.submission');
});

t.test('the Survey123 webhook closes its submission at once, once the portal vouched for its token', async (t) => {
  // A window far longer than the test: only the webhook can close the submission.
  const { emulator, submissions, survey123Url } = await setUp(t, 600_000);
  const { body } = await emulator.control(SUBMISSIONS, { photos: 2, webhookUrl: survey123Url });
  const submitted = body as unknown as Submitted;
  t.equal(submitted.webhook?.status, 200);
  const [submission] = await waitFor('a change.submission', () => submissions.length > 0 && submissions);
  t.match(submission, { key: { globalId: submitted.parent.globalId }, closedBy: 'survey123' });
  t.equal(submission!.related.length, 2);
  t.equal(submission!.attachments.length, 2);
});

t.test('a Survey123 webhook whose token the portal refuses (wrong, then expired) is 401 and closes nothing', async (t) => {
  const { emulator, submissions, survey123Url, geohook } = await setUp(t, 1500);
  const wrong = await emulator.control(SUBMISSIONS, { photos: 1, webhookUrl: survey123Url, portalToken: 'not-a-token' });
  t.equal((wrong.body as unknown as Submitted).webhook?.status, 401);
  const token = await emulator.token();
  await emulator.control('tokens/expire');
  const expired = await fetch(survey123Url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      eventType: 'addData',
      feature: { result: { globalId: (wrong.body as unknown as Submitted).parent.globalId } },
      portalInfo: { url: 'http://elsewhere.invalid/portal', token },
    }),
  });
  t.equal(expired.status, 401);
  t.match(await expired.json(), { code: 'GEOHOOK_ERR_PORTAL_TOKEN' });
  const [submission] = await waitFor('a change.submission', () => submissions.length > 0 && submissions);
  t.equal(submission!.closedBy, 'window', 'closed by its window: neither webhook closed it');
  t.notMatch(geohook.log(), /elsewhere\.invalid/, 'the URL the payload names is not called');
});

t.test('parents created alone are kept as small references: no key of their own, none of their rows (issue 57)', async (t) => {
  const { emulator, events, prefix } = await setUpParcelsChanges(t, redis);
  const lone = 300;
  await emulator.control('services/Hosted/Parcels.FeatureServer/bulk', { layerId: 0, count: lone });
  await countChanges(events, lone);
  const client = new Redis(redis.url);
  t.teardown(() => client.quit());
  // The last batch's parts are recorded after its events are written: wait for the last parent's reference.
  const parentsKeys = async () => (await client.keys(`${prefix}:submissions:*`)).sort();
  const fieldsOf = async (keys: string[]) => (await Promise.all(keys.map((key) => client.hgetall(key)))).flatMap(Object.entries);
  const keys = await waitFor('every parent recorded', async () => {
    const found = await parentsKeys();
    return (await fieldsOf(found)).length >= 2 * lone && found;
  });
  t.ok(
    keys.every((key) => key.startsWith(`${prefix}:submissions:parents:`)),
    'no submission hash, due entry or GlobalID key per parent',
  );
  t.ok(keys.length <= 2, 'one key per period of parents');
  const fields = await fieldsOf(keys);
  t.equal(fields.length, 2 * lone, 'a reference and a GlobalID entry per parent');
  const bytes = fields.reduce((sum, [field, value]) => sum + field.length + value.length, 0);
  t.ok(bytes / lone < 250, `${Math.round(bytes / lone)} bytes per parent: no row, no geometry`);
  t.notOk(
    fields.some(([, value]) => value.includes('{"')),
    'no JSON kept',
  );
});

t.test('a related row that comes in a later range than its parent: the submission has the parent as read from the service', async (t) => {
  const { events, submissions, url, authentication } = await setUp(t, 300);
  const parcel = await applyEdits({
    url: `${url}/0`,
    authentication,
    adds: [{ attributes: { parcel_id: 'late', status: 'Open' }, geometry: square(40) as never }],
  });
  const parent = parcel.addResults[0]!;
  // Its range resolved alone: the parent is kept as a reference.
  await countChanges(events, 1);
  await applyEdits({
    url: `${url}/1`,
    authentication,
    adds: [{ attributes: { parcel_guid: parent.globalId, inspector: 'inspector7', result: 'pass' } }],
  });
  const [submission] = await waitFor('a change.submission', () => submissions.length > 0 && submissions);
  t.match(submission, {
    key: { objectId: parent.objectId, globalId: parent.globalId },
    parent: { layer: { id: 0, name: 'Parcels' }, after: { attributes: { parcel_id: 'late' }, asOf: 'current' } },
    closedBy: 'window',
  });
  t.equal(submission!.related.length, 1);
});
