import t, { type Test } from 'tap';
import { PARCELS } from '../helpers/edits.js';
import { setUpParcelsChanges } from '../helpers/parcels-changes.js';
import { configFile } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
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
