import { addAttachment, applyEdits, deleteAttachments } from '@esri/arcgis-rest-feature-service';
import { ApiKeyManager } from '@esri/arcgis-rest-request';
import { Redis } from 'ioredis';
import pg from 'pg';
import t, { type Test } from 'tap';
import { attachmentDifferences, mirroredAttachments, serverAttachments } from '../../harness/faults/attachment-audit.js';
import { layerGenerations, mirrorGenerations } from '../../harness/faults/mirror-audit.js';
import { trustedUrls } from '../../src/arcgis/trusted-urls.js';
import { createServiceSession } from '../../src/arcgis-request/service-session.js';
import { PreviousValuesStore } from '../../src/changes/previous-values.js';
import { prepareMirrorDatabase } from '../../src/mirror/mirror-database.js';
import { rebuildScope } from '../../src/mirror/rebuild-scope.js';
import { syncScope, type MirrorScope, type SyncContext } from '../../src/mirror/sync-scope.js';
import { PARCELS } from '../helpers/edits.js';
import { catalogWithParcelsPage, startEmulator } from '../helpers/emulator.js';
import { startPostgres } from '../helpers/postgres.js';
import { uniquePrefix } from '../helpers/receiver.js';
import { startRedis } from '../helpers/redis.js';
import { square } from '../helpers/square.js';

// The attachments tables' sync (issue 55), driven directly: what the mirror's copy and ranges make of attachments
// deleted while they are read, compared with the emulator's queryAttachments.

t.setTimeout(120_000);

const redis = await startRedis(t);
const postgres = await startPostgres(t);
let schemas = 0;

const photo = (text: string): File => new File([Buffer.from(text.repeat(10))], `${text}.jpg`, { type: 'image/jpeg' });

/**
 * The emulator (pages of two) with three parcels, a mirror schema, and the context of a sync of Parcels with attachments
 * on (bytes kept); `fetch` is the sync's.
 */
async function setUp(t: Test, fetchFn: typeof fetch = fetch) {
  const emulator = await startEmulator(t, { catalog: catalogWithParcelsPage(2) });
  const url = `${emulator.url}/arcgis/rest/services/Hosted/Parcels/FeatureServer`;
  const token = await emulator.token();
  const authentication = ApiKeyManager.fromKey(token);
  const adds = [0, 1, 2].map((index) => ({ attributes: { parcel_id: `P-${index}` }, geometry: square(index * 100) as never }));
  await applyEdits({ url: `${url}/0`, authentication, adds });
  const pool = new pg.Pool({ connectionString: postgres.url, max: 2 });
  t.teardown(() => pool.end());
  const connection = new Redis(redis.url);
  t.teardown(() => connection.quit());
  schemas += 1;
  const schema = `attachments_${schemas}`;
  await prepareMirrorDatabase(pool, schema);
  const context: SyncContext = {
    pool,
    schema,
    hook: 'default',
    prefix: uniquePrefix(),
    session: createServiceSession({ trusted: trustedUrls([`${emulator.url}/arcgis/rest/services/`]), auth: { token }, fetch: fetchFn }),
    previous: new PreviousValuesStore(connection),
    attachments: { keepBytes: true },
  };
  const scope: MirrorScope = { scope: `default ${PARCELS}`, service: PARCELS, serviceUrl: new URL(url) };
  const serverGen = async (): Promise<number> => Math.max(...(await layerGenerations(url, token)).values());
  const differences = async () => {
    const client = await pool.connect();
    try {
      return attachmentDifferences(await mirroredAttachments(client, schema, 'parcels_parcels'), await serverAttachments(url, 0, token));
    } finally {
      client.release();
    }
  };
  return { url, token, authentication, pool, context, scope, serverGen, differences };
}

t.test('the copy pages by feature: an attachment deleted while the pages are read moves no other out of them', async (t) => {
  let deleteMeanwhile = async (): Promise<void> => undefined;
  let listings = 0;
  const { url, authentication, pool, context, scope, differences } = await setUp(t, async (input, init) => {
    // Before the second listing of parcels' attachments (a page, or a feature's whole list) is asked for.
    const { pathname } = new URL(input instanceof Request ? input.url : String(input));
    if (/\/0\/(queryAttachments|\d+\/attachments)$/.test(pathname) && ++listings === 2) await deleteMeanwhile();
    return fetch(input, init);
  });
  // Pages of two attachments: parcel 1's two, parcel 2's two, parcel 3's one.
  const ids: number[] = [];
  for (const featureId of [1, 1, 2, 2, 3])
    ids.push(
      (await addAttachment({ url: `${url}/0`, authentication, featureId, attachment: photo(`p${ids.length}`) })).addAttachmentResult
        .objectId,
    );
  // Once the first page is read, its first attachment is deleted: the next page at an offset would skip parcel 2's first.
  deleteMeanwhile = async () => void (await deleteAttachments({ url: `${url}/0`, authentication, featureId: 1, attachmentIds: [ids[0]!] }));

  const copied = await syncScope(context, scope, [0, 1], undefined);
  t.equal(copied.length, 2, 'both layers copied');
  t.same(await differences(), [], 'the table equals queryAttachments');
  const { rows } = await pool.query(`SELECT attachment_id FROM ${context.schema}.parcels_parcels__attachments ORDER BY 1`);
  t.same(
    rows.map((row: { attachment_id: string }) => Number(row.attachment_id)),
    ids.slice(1),
    'every attachment but the deleted one',
  );
});

t.test(
  'an attachment of a range that is deleted after the range’s end is left to the range that deletes it: the sync goes on',
  async (t) => {
    const { url, authentication, pool, context, scope, serverGen, differences } = await setUp(t);
    await syncScope(context, scope, [0, 1], undefined);
    const add = async (featureId: number, text: string) =>
      (await addAttachment({ url: `${url}/0`, authentication, featureId, attachment: photo(text) })).addAttachmentResult.objectId;
    const gone = await add(1, 'deleted-after-the-range');
    const kept = await add(2, 'kept');
    const rangeEnd = await serverGen();
    await deleteAttachments({ url: `${url}/0`, authentication, featureId: 1, attachmentIds: [gone] });

    // The range up to `rangeEnd` lists both adds; the first one's bytes are no longer there.
    const synced = await syncScope(context, scope, [0, 1], rangeEnd);
    t.same(
      synced.map((sync) => sync.serverGen),
      [rangeEnd, rangeEnd],
      'both layers at the range’s end',
    );
    const { rows } = await pool.query(`SELECT attachment_id FROM ${context.schema}.parcels_parcels__attachments ORDER BY 1`);
    t.same(
      rows.map((row: { attachment_id: string }) => Number(row.attachment_id)),
      [kept],
      'the one still there written',
    );

    await syncScope(context, scope, [0, 1], await serverGen());
    t.same(
      await mirrorGenerations(pool, context.schema, PARCELS),
      new Map([
        [0, await serverGen()],
        [1, await serverGen()],
      ]),
    );
    t.same(await differences(), [], 'the table equals queryAttachments once the delete is applied');
  },
);

t.test('a rebuild puts its copy of the attachments table in the old one’s place, and can be made again', async (t) => {
  const { url, authentication, pool, context, scope, differences } = await setUp(t);
  await syncScope(context, scope, [0, 1], undefined);
  const tablesOf = async (): Promise<string[]> =>
    (
      await pool.query<{ tablename: string }>('SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY 1', [context.schema])
    ).rows.map((row) => row.tablename);
  const before = await tablesOf();
  for (const text of ['first-rebuild', 'second-rebuild']) {
    // Added while no range is applied: only the rebuild's copy has it.
    await addAttachment({ url: `${url}/0`, authentication, featureId: 1, attachment: photo(text) });
    t.ok(await rebuildScope(context, scope, [0, 1]), `the ${text} made`);
    t.same(await differences(), [], `after the ${text}, the table equals queryAttachments`);
    t.same(await tablesOf(), before, `after the ${text}, the same tables: none left by the copy`);
  }
});

t.test('attachments turned off and on again: the table kept meanwhile is not trusted, it is copied anew', async (t) => {
  const { url, authentication, pool, context, scope, serverGen, differences } = await setUp(t);
  await syncScope(context, scope, [0, 1], undefined);
  const { attachments: _on, ...off } = context;
  // Added while attachments are off: the ranges of that time apply no attachment change.
  await addAttachment({ url: `${url}/0`, authentication, featureId: 1, attachment: photo('while-off') });
  await syncScope(off, scope, [0, 1], await serverGen());
  const { rows } = await pool.query(`SELECT to_regclass('${context.schema}.parcels_parcels__attachments') AS found`);
  t.equal(rows[0].found, null, 'no attachments table while attachments are off');

  await addAttachment({ url: `${url}/0`, authentication, featureId: 2, attachment: photo('on-again') });
  await syncScope(context, scope, [0, 1], await serverGen());
  t.same(await differences(), [], 'on again, the table equals queryAttachments');
});
