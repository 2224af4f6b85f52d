import { addAttachment, applyEdits, deleteAttachments, updateAttachment } from '@esri/arcgis-rest-feature-service';
import t from 'tap';
import { attachmentDifferences, mirroredAttachments, serverAttachments } from '../../harness/faults/attachment-audit.js';
import { PARCELS } from '../helpers/edits.js';
import { catalogWithParcelsPage } from '../helpers/emulator.js';
import { startGeohook } from '../helpers/geohook.js';
import { caughtUp, mirrorParcels } from '../helpers/mirror.js';
import { startPostgres } from '../helpers/postgres.js';
import { configFile } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

// The mirror's attachments tables (issue 55): with attachments on for the service, each layer that has them gets
// `<table>__attachments`, equal to the server's queryAttachments after the copy, adds, updates, deletes and a restart.

t.setTimeout(180_000);

const redis = await startRedis(t);
const postgres = await startPostgres(t);

t.test('the attachments tables equal queryAttachments after the copy, a submission, an update, deletes and a restart', async (t) => {
  const photo = (text: string, type = 'image/jpeg') => new File([Buffer.from(text)], `${text}.jpg`, { type });
  const { emulator, geohook, url, token, authentication, schema, client, env } = await mirrorParcels(t, { redis, postgres }, 2, {
    env: { GEOHOOK_CONFIG: configFile(t, { changes: { [PARCELS]: { attachments: 'metadata' } } }), MIRROR_ATTACHMENT_BYTES: 'true' },
    seed: async (url, authentication) => {
      await addAttachment({ url: `${url}/0`, authentication, featureId: 1, attachment: photo('before-start') });
    },
  });
  const equal = async (message: string): Promise<void> => {
    await caughtUp(client, schema, url, token);
    for (const [layerId, table] of [
      [0, 'parcels_parcels'],
      [1, 'parcels_inspections'],
    ] as const) {
      const mirrored = await mirroredAttachments(client, schema, table);
      t.same(attachmentDifferences(mirrored, await serverAttachments(url, layerId, token)), [], `${message}: ${table}`);
      t.ok(
        mirrored.every((row) => row.data === row.sha256),
        `${message}: ${table} keeps the bytes`,
      );
    }
  };
  await equal('the initial copy');
  t.equal((await mirroredAttachments(client, schema, 'parcels_parcels')).length, 1);

  const { body } = await emulator.control('services/Hosted/Parcels.FeatureServer/submissions', { photos: [{}, {}, { on: 0 }] });
  const parent = (body as { parent: { objectId: number } }).parent;
  await equal('a submission');
  t.equal((await mirroredAttachments(client, schema, 'parcels_parcels')).length, 3, 'the parent has its two photos');

  await updateAttachment({ url: `${url}/0`, authentication, featureId: 1, attachmentId: 1, attachment: photo('replaced', 'image/png') });
  await addAttachment({ url: `${url}/0`, authentication, featureId: 2, attachment: photo('only-an-attachment') });
  await equal('an attachment replaced, one added to a feature the range does not otherwise change');

  const [first] = (await mirroredAttachments(client, schema, 'parcels_parcels')).filter((row) => row.parentObjectId === parent.objectId);
  await deleteAttachments({ url: `${url}/0`, authentication, featureId: parent.objectId, attachmentIds: [first!.id] });
  await applyEdits({ url: `${url}/0`, authentication, deletes: [1] });
  await equal('an attachment deleted, and the feature whose attachment it was');

  await geohook.stop();
  await addAttachment({ url: `${url}/0`, authentication, featureId: 2, attachment: photo('while-stopped') });
  const again = await startGeohook(t, redis, env);
  await waitFor('registered', async () => (await again.readyz()).status === 200);
  await equal('edits made while geohook was stopped, after a restart');
});

t.test('the initial copy reads queryAttachments a page at a time: 5 photos over pages of 2', async (t) => {
  const photo = (text: string) => new File([Buffer.from(text)], `${text}.jpg`, { type: 'image/jpeg' });
  const { url, token, schema, client } = await mirrorParcels(t, { redis, postgres }, 2, {
    env: { GEOHOOK_CONFIG: configFile(t, { changes: { [PARCELS]: { attachments: 'metadata' } } }) },
    emulator: { catalog: catalogWithParcelsPage(2) },
    seed: async (url, authentication) => {
      for (const [index, featureId] of [1, 1, 1, 2, 2].entries())
        await addAttachment({ url: `${url}/0`, authentication, featureId, attachment: photo(`photo-${index}`) });
    },
  });
  await caughtUp(client, schema, url, token);
  const server = await serverAttachments(url, 0, token);
  t.equal(server.length, 5, 'the server lists five over three pages');
  t.same(attachmentDifferences(await mirroredAttachments(client, schema, 'parcels_parcels'), server), [], 'every photo copied');
});

t.test('without attachments on, the mirror makes no attachments table', async (t) => {
  const { url, token, schema, client } = await mirrorParcels(t, { redis, postgres }, 1);
  await caughtUp(client, schema, url, token);
  const { rows } = await client.query(`SELECT to_regclass('${schema}.parcels_parcels__attachments') AS found`);
  t.equal(rows[0].found, null);
});
