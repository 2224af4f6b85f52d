import { createHash } from 'node:crypto';
import { addAttachment, applyEdits, deleteAttachments, updateAttachment } from '@esri/arcgis-rest-feature-service';
import type pg from 'pg';
import t from 'tap';
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

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** What the server lists of a layer's attachments (every page), each with the SHA-256 of its bytes, ordered by id. */
async function serverAttachments(url: string, token: string, layerId: number): Promise<unknown[]> {
  const groups: { parentObjectId: number; parentGlobalId: string; attachmentInfos: Record<string, unknown>[] }[] = [];
  for (let more = true; more;) {
    const offset = groups.reduce((sum, group) => sum + group.attachmentInfos.length, 0);
    const answer = (await (
      await fetch(`${url}/${layerId}/queryAttachments?definitionExpression=1%3D1&resultOffset=${offset}&f=json&token=${token}`)
    ).json()) as { attachmentGroups: typeof groups; exceededTransferLimit?: boolean };
    groups.push(...answer.attachmentGroups);
    more = answer.exceededTransferLimit === true;
  }
  const rows = [];
  for (const group of groups)
    for (const info of group.attachmentInfos) {
      const bytes = new Uint8Array(
        await (await fetch(`${url}/${layerId}/${group.parentObjectId}/attachments/${String(info.id)}?token=${token}`)).arrayBuffer(),
      );
      rows.push({
        id: info.id,
        globalId: info.globalId,
        parentObjectId: group.parentObjectId,
        parentGlobalId: group.parentGlobalId,
        name: info.name,
        contentType: info.contentType,
        size: info.size,
        sha256: sha256(bytes),
        data: sha256(bytes),
      });
    }
  return rows.sort((a, b) => Number(a.id) - Number(b.id));
}

/** The mirror's attachments table of a layer table, as {@link serverAttachments} lists them (`data` hashed). */
async function mirroredAttachments(client: pg.Client, schema: string, table: string): Promise<unknown[]> {
  const { rows } = await client.query<Record<string, unknown>>(
    `SELECT attachment_id, global_id, parent_object_id, parent_global_id, name, content_type, size, sha256, data FROM ${schema}.${table}__attachments ORDER BY attachment_id`,
  );
  return rows.map((row) => ({
    id: Number(row.attachment_id),
    globalId: row.global_id,
    parentObjectId: Number(row.parent_object_id),
    parentGlobalId: row.parent_global_id,
    name: row.name,
    contentType: row.content_type,
    size: Number(row.size),
    sha256: row.sha256,
    data: row.data === null ? null : sha256(row.data as Buffer),
  }));
}

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
    t.same(await mirroredAttachments(client, schema, 'parcels_parcels'), await serverAttachments(url, token, 0), `${message}: parcels`);
    t.same(
      await mirroredAttachments(client, schema, 'parcels_inspections'),
      await serverAttachments(url, token, 1),
      `${message}: inspections`,
    );
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

  const [first] = (await mirroredAttachments(client, schema, 'parcels_parcels')).filter(
    (row) => (row as { parentObjectId: number }).parentObjectId === parent.objectId,
  ) as { id: number }[];
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
  const server = await serverAttachments(url, token, 0);
  t.equal(server.length, 5, 'the server lists five over three pages');
  const mirrored = (await mirroredAttachments(client, schema, 'parcels_parcels')).map((row) => ({ ...(row as object), data: null }));
  t.same(
    mirrored,
    server.map((row) => ({ ...(row as object), data: null })),
    'every photo copied',
  );
});

t.test('without attachments on, the mirror makes no attachments table', async (t) => {
  const { url, token, schema, client } = await mirrorParcels(t, { redis, postgres }, 1);
  await caughtUp(client, schema, url, token);
  const { rows } = await client.query(`SELECT to_regclass('${schema}.parcels_parcels__attachments') AS found`);
  t.equal(rows[0].found, null);
});
