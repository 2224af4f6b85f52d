import { createHash } from 'node:crypto';
import { addAttachment, deleteAttachments, deleteFeatures } from '@esri/arcgis-rest-feature-service';
import { Redis } from 'ioredis';
import t from 'tap';
import type { ChangeEvent } from '../../src/changes/change-event.js';
import { loadConfig } from '../../src/config/load-config.js';
import { PARCELS } from '../helpers/edits.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { countChanges, setUpParcelsChanges } from '../helpers/parcels-changes.js';
import { configFile } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// Attachments in change events (issue 55): with `attachments: "metadata"` a feature's create or update carries the
// attachments its range added or updated, each with the SHA-256 of its bytes; without it, events are as they were.

const redis = await startRedis(t);

interface Submitted {
  parent: { objectId: number; globalId: string };
  related: { objectId: number; globalId: string }[];
  attachments: { id: number; globalId: string; layerId: number; name: string; size: number; keywords: string; sha256: string }[];
}

const byKey = (events: readonly ChangeEvent[], layerId: number, objectId: number): ChangeEvent | undefined =>
  events.find((event) => event.layer.id === layerId && event.key.objectId === objectId);

t.test(
  'attachments "metadata": a submitted parcel\'s created event carries its four photos with their SHA-256, the inspections theirs',
  async (t) => {
    const config = configFile(t, { changes: { [PARCELS]: { attachments: 'metadata' } } });
    const { emulator, events } = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: config });
    const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', {
      photos: [{}, {}, {}, { on: 1, name: 'meter.jpg', keywords: 'meter' }].map((photo, index) => ({
        name: `photo-${index + 1}.jpg`,
        ...photo,
      })),
    });
    const submitted = body as unknown as Submitted;
    const all = await countChanges(events, 3);
    t.equal(all.length, 3, 'one event per feature, as without attachments');

    const parcel = byKey(all, 0, submitted.parent.objectId)!;
    t.equal(parcel.type, 'change.created');
    const onParcel = submitted.attachments.filter((photo) => photo.layerId === 0);
    t.same(
      parcel.attachments,
      {
        adds: onParcel.map((photo) => ({
          id: photo.id,
          globalId: photo.globalId,
          name: photo.name,
          contentType: 'image/jpeg',
          size: photo.size,
          keywords: photo.keywords,
          sha256: photo.sha256,
          parentKey: { objectId: submitted.parent.objectId, globalId: submitted.parent.globalId },
        })),
        updates: [],
        deletes: [],
      },
      'the photos uploaded, each with the SHA-256 of its bytes',
    );
    const second = byKey(all, 1, submitted.related[1]!.objectId)!;
    t.match(second.attachments, { adds: [{ name: 'meter.jpg', keywords: 'meter', sha256: submitted.attachments[3]!.sha256 }] });
    t.notOk('attachments' in byKey(all, 1, submitted.related[0]!.objectId)!, 'an inspection without photos carries none');
    t.ok(
      emulator.requests.some((line) => /extractChanges\?.*returnAttachments=true/.test(line)),
      'geohook asked for the attachments itself',
    );
  },
);

t.test('an edit of attachments alone is an update of their feature, a delete named by the attachment', async (t) => {
  const config = configFile(t, { changes: { [PARCELS]: { attachments: 'metadata', submissionWindowMs: 0 } } });
  const { emulator, events, url, authentication, prefix } = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: config });
  const client = new Redis(redis.url);
  t.teardown(() => client.quit());
  /** The attachments whose parent geohook keeps, every layer's. */
  const parentsKept = async () => {
    const keys = await client.keys(`${prefix}:changes:attachments:*`);
    return (await Promise.all(keys.map((key) => client.hkeys(key)))).flat();
  };
  const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', { related: 0, photos: 0 });
  const { parent } = body as unknown as Submitted;
  await countChanges(events, 1);
  const photo = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 9, 8, 7]);
  const added = await addAttachment({
    url: `${url}/0`,
    authentication,
    featureId: parent.objectId,
    attachment: new File([photo], 'later.jpg', { type: 'image/jpeg' }),
  });
  const [, update] = await countChanges(events, 2);
  t.match(update, {
    type: 'change.updated',
    key: { objectId: parent.objectId, globalId: parent.globalId },
    after: { asOf: 'current' },
    attachments: {
      adds: [{ id: added.addAttachmentResult.objectId, name: 'later.jpg', sha256: createHash('sha256').update(photo).digest('hex') }],
      updates: [],
      deletes: [],
    },
  });
  t.equal((await parentsKept()).length, 1, 'the parent of the attachment added is kept');
  await deleteAttachments({
    url: `${url}/0`,
    authentication,
    featureId: parent.objectId,
    attachmentIds: [added.addAttachmentResult.objectId],
  });
  const [, , removal] = await countChanges(events, 3);
  t.match(removal, {
    type: 'change.updated',
    key: { globalId: parent.globalId },
    attachments: {
      adds: [],
      updates: [],
      deletes: [{ id: added.addAttachmentResult.objectId, globalId: added.addAttachmentResult.globalId }],
    },
  });
  t.not(removal!.id, update!.id, 'each edit of the attachments is an event of its own');
  await waitFor('the parent of the attachment deleted forgotten', async () => (await parentsKept()).length === 0);
});

/** An attachment's bytes asked of Parcels' layer 0: its feature's object id and its id. */
const BYTES_OF_PARCEL = /^(?:GET|POST) \/arcgis\/rest\/services\/Hosted\/Parcels\/FeatureServer\/0\/(\d+)\/attachments\/(\d+)(\?|$)/;

/**
 * Makes `emulator` run `gone` (once, with the feature's object id and the attachment's id) before it answers the first
 * read of a parcel's attachment bytes, every such read waiting for it: deleted after the range's end, before geohook
 * read it.
 */
function deleteBeforeBytesRead(emulator: TestEmulator, gone: (objectId: number, attachmentId: number) => Promise<unknown>): void {
  let deleted: Promise<unknown> | undefined;
  emulator.beforeAnswer = async (request) => {
    const match = BYTES_OF_PARCEL.exec(request);
    if (match === null) return;
    deleted ??= gone(Number(match[1]), Number(match[2]));
    await deleted;
  };
}

t.test(
  "issue 55: an attachment deleted after its range's end, before geohook read it, is left out; the range resolves, the next lists its delete",
  async (t) => {
    const config = configFile(t, { changes: { [PARCELS]: { attachments: 'metadata', submissionWindowMs: 0 } } });
    const { emulator, geohook, events, url, authentication } = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: config });
    const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', { related: 0, photos: 0 });
    const { parent } = body as unknown as Submitted;
    await countChanges(events, 1);
    deleteBeforeBytesRead(emulator, (featureId, attachmentId) =>
      deleteAttachments({ url: `${url}/0`, authentication, featureId, attachmentIds: [attachmentId] }),
    );
    const added = await addAttachment({
      url: `${url}/0`,
      authentication,
      featureId: parent.objectId,
      attachment: new File([new Uint8Array([0xff, 0xd8, 1, 2, 3])], 'gone.jpg', { type: 'image/jpeg' }),
    });
    const [, update, removal] = await countChanges(events, 3);
    t.match(update, {
      type: 'change.updated',
      key: { objectId: parent.objectId },
      attachments: { adds: [], updates: [], deletes: [] },
    });
    t.match(removal, {
      type: 'change.updated',
      key: { objectId: parent.objectId },
      attachments: {
        adds: [],
        updates: [],
        deletes: [{ id: added.addAttachmentResult.objectId, globalId: added.addAttachmentResult.globalId }],
      },
    });
    t.equal(new Set(events.map((event) => event.id)).size, events.length, 'each event once');
    t.notMatch(geohook.log(), /range resolution failed|range failed for good/, 'no range failed');
  },
);

t.test(
  'issue 55: a submission whose parcel is deleted before its photos are read: its events and change.submission arrive once, without them',
  async (t) => {
    const config = configFile(t, { changes: { [PARCELS]: { attachments: 'metadata', submissionWindowMs: 300 } } });
    const { emulator, geohook, events, submissions, url, authentication } = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: config });
    deleteBeforeBytesRead(emulator, (objectId) => deleteFeatures({ url: `${url}/0`, authentication, objectIds: [objectId] }));
    const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', { related: 1, photos: 2 });
    const submitted = body as unknown as Submitted;
    const all = await countChanges(events, 3);
    t.match(byKey(all, 0, submitted.parent.objectId), { type: 'change.created', attachments: { adds: [], updates: [], deletes: [] } });
    t.match(byKey(all, 1, submitted.related[0]!.objectId), { type: 'change.created' });
    t.match(all[2], { type: 'change.deleted', layer: { id: 0 }, key: { objectId: submitted.parent.objectId } });
    const [submission] = await waitFor('the submission', () => submissions.length >= 1 && submissions);
    t.match(submission, { parent: { key: { objectId: submitted.parent.objectId } }, related: [{ layer: { id: 1 } }], attachments: [] });
    t.equal(new Set(events.map((event) => event.id)).size, events.length, 'each event once');
    t.equal(submissions.length, 1, 'one submission');
    t.notMatch(geohook.log(), /range resolution failed|range failed for good/, 'no range failed');
  },
);

t.test('issue 55: an attachment whose bytes answer 500 once is not taken as gone: its event carries it, SHA-256 and all', async (t) => {
  const config = configFile(t, { changes: { [PARCELS]: { attachments: 'metadata', submissionWindowMs: 0 } } });
  const { emulator, events, url, authentication } = await setUpParcelsChanges(t, redis, { GEOHOOK_CONFIG: config });
  const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', { related: 0, photos: 0 });
  const { parent } = body as unknown as Submitted;
  await countChanges(events, 1);
  let failed = 0;
  emulator.beforeAnswer = async (request) => {
    if (BYTES_OF_PARCEL.test(request) && failed++ === 0) throw new Error('the server fails once');
  };
  const photo = new Uint8Array([0xff, 0xd8, 4, 5, 6]);
  await addAttachment({
    url: `${url}/0`,
    authentication,
    featureId: parent.objectId,
    attachment: new File([photo], 'flaky.jpg', { type: 'image/jpeg' }),
  });
  const [, update] = await countChanges(events, 2);
  t.ok(failed >= 2, 'read again after the 500');
  t.match(update, { attachments: { adds: [{ name: 'flaky.jpg', sha256: createHash('sha256').update(photo).digest('hex') }] } });
});

t.test('without attachments set, events carry none and geohook asks extractChanges for none', async (t) => {
  const { emulator, events } = await setUpParcelsChanges(t, redis);
  await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', {});
  const all = await countChanges(events, 3);
  t.equal(all.length, 3);
  t.ok(all.every((event) => !('attachments' in event)));
  t.ok(emulator.requests.some((line) => /extractChanges\?.*returnAttachments=false/.test(line)));
  t.notOk(
    emulator.requests.some((line) => /\/attachments\/\d+/.test(line)),
    'no attachment was downloaded',
  );
});

t.test('attachments must be "none", "metadata" or "link"', async (t) => {
  const config = configFile(t, { changes: { [PARCELS]: { attachments: 'bytes' } } });
  t.throws(() => loadConfig({ GEOHOOK_CONFIG: config, CHANGES: PARCELS }), {
    code: 'GEOHOOK_ERR_CONFIG',
    message: /none, metadata or link/,
  });
});
