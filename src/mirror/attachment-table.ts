import type pg from 'pg';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { unlessGone } from '../arcgis-request/unless-gone.js';
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

/** The index of an attachments table on its parents' object ids, by the layer's table. */
export const attachmentParentIndexOf = (table: string): string => `${attachmentTableOf(table).slice(0, 50)}_parent`;

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
  await client.query(`CREATE INDEX ${quoteIdentifier(attachmentParentIndexOf(target.table))} ON ${nameOf(target)} (parent_object_id)`);
  return true;
}

/** Drops the attachments table of a layer's `table` when there is one (attachments are off: it would fall behind). */
export async function dropAttachmentTable(client: pg.ClientBase, schema: string, table: string): Promise<void> {
  await client.query(`DROP TABLE IF EXISTS ${qualifiedName(schema, attachmentTableOf(table))}`);
}

const numberOf = (value: unknown): number | undefined => (typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined);

/** The parent's object id in an attachment's URL (`…/<layer>/<oid>/attachments/<id>`). */
const parentOfUrl = (url: unknown): number | undefined => {
  const match = typeof url === 'string' ? /\/(\d+)\/attachments\/\d+\/?$/.exec(url.split('?')[0]!) : null;
  return match === null ? undefined : Number(match[1]);
};

/**
 * A listed attachment read (hashed, its bytes kept when asked) into a row; undefined when the server no longer has it:
 * it was deleted after the range's end (or the copy's listing), and a later range deletes it.
 */
async function rowOf(
  session: ServiceSession,
  listed: ListedAttachment,
  target: AttachmentTarget,
  parentObjectId?: number,
): Promise<AttachmentRow | undefined> {
  const read = await unlessGone(readAttachment(session, listed, target.keepBytes));
  if (read === undefined) return undefined;
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

/** A group of `queryAttachments`: one feature's attachments. */
interface AttachmentGroup {
  parentObjectId: number;
  parentGlobalId: unknown;
  attachmentInfos: unknown;
}

/**
 * Fills the attachments table with what `queryAttachments` lists of the layer now, every attachment read once for its
 * SHA-256 (and bytes when kept); rows it held are replaced. Pages of the layer's `maxRecordCount` attachments follow
 * the object id of the last feature of the page before (`definitionExpression`), never an offset: an attachment
 * deleted meanwhile moves no other out of the pages. The last feature of a page that may stop short (it says
 * `exceededTransferLimit`, or is full) may be cut: its attachments are read whole (`…/<oid>/attachments`). Runs in
 * the caller's transaction.
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
  let copied = 0;
  const copy = async ({ parentObjectId: parent, parentGlobalId, attachmentInfos }: AttachmentGroup): Promise<void> => {
    for (const info of Array.isArray(attachmentInfos) ? (attachmentInfos as ListedAttachment[]) : []) {
      const id = numberOf(info.id);
      if (id === undefined) continue;
      const row = await rowOf(session, { parentGlobalId, ...info, url: `${layerUrl}/${parent}/attachments/${id}` }, target, parent);
      if (row === undefined) continue;
      await upsert(client, target, row);
      copied += 1;
    }
  };
  for (let after: number | undefined; ;) {
    const url = new URL(`${layerUrl}/queryAttachments`);
    url.search = new URLSearchParams({
      definitionExpression: after === undefined ? '1=1' : `${layer.objectIdField} > ${after}`,
      resultRecordCount: String(layer.maxRecordCount),
    }).toString();
    const answer = await session.read(url);
    const groups = (Array.isArray(answer.attachmentGroups) ? (answer.attachmentGroups as AttachmentGroup[]) : []).filter(
      (group) => numberOf(group.parentObjectId) !== undefined,
    );
    const listed = groups.reduce((sum, group) => sum + (Array.isArray(group.attachmentInfos) ? group.attachmentInfos.length : 0), 0);
    // A full page may stop short of the layer's end though the server does not say so.
    const more = answer.exceededTransferLimit === true || listed >= layer.maxRecordCount;
    const cut = more ? groups.pop() : undefined;
    for (const group of groups) await copy(group);
    if (cut !== undefined) {
      const whole = await unlessGone(session.read(new URL(`${layerUrl}/${cut.parentObjectId}/attachments`)));
      await copy({ ...cut, attachmentInfos: whole?.attachmentInfos });
    }
    const last = cut ?? groups.at(-1);
    if (!more || last === undefined) return copied;
    after = last.parentObjectId;
  }
}

/**
 * A range's attachment changes applied to the table: the deleted ones (by GlobalID) and those of the features the
 * range deleted removed, the added and updated ones written as the range's end has them. One the server no longer has
 * (deleted after the range's end: its URL answers 404) is left to the later range that deletes it.
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
  for (const listed of changes.upserts) {
    const row = await rowOf(session, listed, target);
    if (row !== undefined) await upsert(client, target, row);
  }
}
