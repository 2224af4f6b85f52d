import type pg from 'pg';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { normalizeGuid, readAttachment, type LayerAttachmentChanges, type ListedAttachment } from '../changes/attachment-changes.js';
import { qualifiedName, quoteIdentifier } from './column-types.js';

/** Where a layer's attachments are mirrored, and whether their bytes are kept. */
export interface AttachmentTarget {
  schema: string;
  /** The layer's table: its attachments are in `<table>__attachments`. */
  table: string;
  /** Keep each attachment's bytes in `data` (MIRROR_ATTACHMENT_BYTES); otherwise `data` stays null. */
  keepBytes: boolean;
}

/** The table of a layer's attachments: `<layer table>__attachments`, within PostgreSQL's 63 characters. */
export const attachmentTableOf = (table: string): string => `${table.slice(0, 50)}__attachments`;

const nameOf = (target: AttachmentTarget): string => qualifiedName(target.schema, attachmentTableOf(target.table));

/** One row of an attachments table. */
interface AttachmentRow {
  id: number;
  globalId: string | undefined;
  parentObjectId: number | undefined;
  parentGlobalId: string | undefined;
  name: string;
  contentType: string;
  size: number;
  keywords: string | undefined;
  sha256: string;
  bytes: Buffer | undefined;
}

/** Makes the attachments table when it is missing; resolves to whether it was made. */
export async function ensureAttachmentTable(client: pg.ClientBase, target: AttachmentTarget): Promise<boolean> {
  const table = attachmentTableOf(target.table);
  const { rows } = await client.query<{ found: string | null }>('SELECT to_regclass($1) AS found', [
    `${quoteIdentifier(target.schema)}.${quoteIdentifier(table)}`,
  ]);
  if (rows[0]?.found !== null && rows[0]?.found !== undefined) return false;
  await client.query(
    `CREATE TABLE ${nameOf(target)} (attachment_id bigint PRIMARY KEY, global_id text, parent_object_id bigint, ` +
      'parent_global_id text, name text NOT NULL, content_type text NOT NULL, size bigint NOT NULL, keywords text, ' +
      'sha256 text NOT NULL, data bytea)',
  );
  await client.query(`CREATE INDEX ${quoteIdentifier(`${table.slice(0, 50)}_parent`)} ON ${nameOf(target)} (parent_object_id)`);
  return true;
}

const numberOf = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined);

/** The parent's object id in an attachment's URL (`…/<layer>/<oid>/attachments/<id>`). */
const parentOfUrl = (url: unknown): number | undefined => {
  const match = typeof url === 'string' ? /\/(\d+)\/attachments\/\d+\/?$/.exec(url.split('?')[0]!) : null;
  return match === null ? undefined : Number(match[1]);
};

/** A listed attachment read (hashed, its bytes kept when asked) into a row. */
async function rowOf(
  session: ServiceSession,
  listed: ListedAttachment,
  target: AttachmentTarget,
  parentObjectId?: number,
): Promise<AttachmentRow> {
  const read = await readAttachment(session, listed, target.keepBytes);
  return {
    id: numberOf(listed.attachmentId) ?? numberOf(listed.id) ?? -1,
    globalId: normalizeGuid(listed.globalId),
    parentObjectId: parentObjectId ?? parentOfUrl(listed.url),
    parentGlobalId: normalizeGuid(listed.parentGlobalId),
    name: typeof listed.name === 'string' ? listed.name : '',
    contentType: typeof listed.contentType === 'string' ? listed.contentType : 'application/octet-stream',
    size: numberOf(listed.size) ?? 0,
    keywords: typeof listed.keywords === 'string' && listed.keywords !== '' ? listed.keywords : undefined,
    sha256: read.sha256,
    bytes: read.bytes,
  };
}

async function upsert(client: pg.ClientBase, target: AttachmentTarget, row: AttachmentRow): Promise<void> {
  await client.query(
    `INSERT INTO ${nameOf(target)} (attachment_id, global_id, parent_object_id, parent_global_id, name, content_type, size, keywords, sha256, data) ` +
      'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (attachment_id) DO UPDATE SET global_id = EXCLUDED.global_id, ' +
      'parent_object_id = EXCLUDED.parent_object_id, parent_global_id = EXCLUDED.parent_global_id, name = EXCLUDED.name, ' +
      'content_type = EXCLUDED.content_type, size = EXCLUDED.size, keywords = EXCLUDED.keywords, sha256 = EXCLUDED.sha256, data = EXCLUDED.data',
    [
      row.id,
      row.globalId,
      row.parentObjectId,
      row.parentGlobalId,
      row.name,
      row.contentType,
      row.size,
      row.keywords,
      row.sha256,
      row.bytes,
    ],
  );
}

/**
 * Fills the attachments table with what `queryAttachments` lists of the layer now, a page of the layer's
 * `maxRecordCount` attachments at a time (`resultOffset`, until a page is short and not `exceededTransferLimit`),
 * every attachment read once for its SHA-256 (and bytes when kept); rows it held are replaced. Runs in the caller's
 * transaction.
 */
export async function copyAttachments(
  client: pg.ClientBase,
  session: ServiceSession,
  serviceUrl: URL,
  layer: LayerInfo,
  target: AttachmentTarget,
): Promise<number> {
  await client.query(`DELETE FROM ${nameOf(target)}`);
  const layerUrl = `${serviceUrl.href.replace(/\/+$/, '')}/${layer.id}`;
  const pageSize = layer.maxRecordCount;
  let copied = 0;
  for (let offset = 0; ;) {
    const url = new URL(`${layerUrl}/queryAttachments`);
    url.search = new URLSearchParams({
      definitionExpression: '1=1',
      resultOffset: String(offset),
      resultRecordCount: String(pageSize),
    }).toString();
    const answer = await session.read(url);
    const groups = Array.isArray(answer.attachmentGroups) ? (answer.attachmentGroups as Record<string, unknown>[]) : [];
    let listedInPage = 0;
    for (const group of groups) {
      const parent = numberOf(group.parentObjectId);
      for (const info of Array.isArray(group.attachmentInfos) ? (group.attachmentInfos as ListedAttachment[]) : []) {
        listedInPage += 1;
        const id = numberOf(info.id);
        if (parent === undefined || id === undefined) continue;
        const listed = { parentGlobalId: group.parentGlobalId, ...info, url: `${layerUrl}/${parent}/attachments/${id}` };
        await upsert(client, target, await rowOf(session, listed, target, parent));
        copied += 1;
      }
    }
    offset += listedInPage;
    if (listedInPage === 0 || (listedInPage < pageSize && answer.exceededTransferLimit !== true)) return copied;
  }
}

/**
 * A range's attachment changes applied to the table: the deleted ones (by GlobalID) and those of the features the
 * range deleted removed, the added and updated ones written as the range's end has them.
 */
export async function applyAttachmentChanges(
  client: pg.ClientBase,
  session: ServiceSession,
  target: AttachmentTarget,
  changes: LayerAttachmentChanges | undefined,
  deletedParents: readonly number[],
): Promise<void> {
  if (deletedParents.length > 0)
    await client.query(`DELETE FROM ${nameOf(target)} WHERE parent_object_id = ANY($1::bigint[])`, [deletedParents]);
  if (changes === undefined) return;
  if (changes.deletes.length > 0) await client.query(`DELETE FROM ${nameOf(target)} WHERE global_id = ANY($1::text[])`, [changes.deletes]);
  for (const listed of changes.upserts) await upsert(client, target, await rowOf(session, listed, target));
}
