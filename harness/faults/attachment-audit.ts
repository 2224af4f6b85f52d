import { createHash } from 'node:crypto';
import type pg from 'pg';
import { normalizeGuid } from '../../src/changes/attachment-changes.js';
import { attachmentTableOf } from '../../src/mirror/attachment-table.js';
import { qualifiedName } from '../../src/mirror/column-types.js';

/** One attachment as the mirror and the server are compared: its metadata and the SHA-256 of its bytes. */
export interface AttachmentRecord {
  id: number;
  globalId: string | null;
  parentObjectId: number;
  parentGlobalId: string | null;
  name: string;
  contentType: string;
  size: number;
  /** Null for none (the server lists `""`). */
  keywords: string | null;
  sha256: string;
}

/** A mirrored attachment: with the SHA-256 of the bytes its `data` holds (null when the table keeps none). */
export type MirroredAttachment = AttachmentRecord & { data: string | null };

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** GETs a REST resource as JSON with `token`; throws on an error answer. */
async function readJson(url: string, params: Record<string, string>, token: string): Promise<Record<string, unknown>> {
  const body = (await (await fetch(`${url}?${new URLSearchParams({ f: 'json', token, ...params })}`)).json()) as Record<string, unknown>;
  if (body.error !== undefined) throw new Error(`${url}: ${JSON.stringify(body.error)}`);
  return body;
}

/**
 * Every attachment the server's `queryAttachments` lists of a layer (every page, by `resultOffset`: the server must
 * not change meanwhile), each with the SHA-256 of the bytes its URL serves, ordered by id.
 */
export async function serverAttachments(serviceUrl: string, layerId: number, token: string): Promise<AttachmentRecord[]> {
  type Group = { parentObjectId: number; parentGlobalId?: string; attachmentInfos: Record<string, unknown>[] };
  const groups: Group[] = [];
  for (let offset = 0, more = true; more;) {
    const answer = await readJson(
      `${serviceUrl}/${layerId}/queryAttachments`,
      { definitionExpression: '1=1', resultOffset: String(offset) },
      token,
    );
    const page = answer.attachmentGroups as Group[];
    groups.push(...page);
    offset += page.reduce((sum, group) => sum + group.attachmentInfos.length, 0);
    more = answer.exceededTransferLimit === true;
  }
  const records: AttachmentRecord[] = [];
  for (const group of groups)
    for (const info of group.attachmentInfos) {
      const bytesUrl = `${serviceUrl}/${layerId}/${group.parentObjectId}/attachments/${String(info.id)}?token=${token}`;
      const bytes = new Uint8Array(await (await fetch(bytesUrl)).arrayBuffer());
      records.push({
        id: info.id as number,
        globalId: normalizeGuid(info.globalId) ?? null,
        parentObjectId: group.parentObjectId,
        parentGlobalId: normalizeGuid(info.parentGlobalId ?? group.parentGlobalId) ?? null,
        name: info.name as string,
        contentType: info.contentType as string,
        size: info.size as number,
        keywords: typeof info.keywords === 'string' && info.keywords !== '' ? info.keywords : null,
        sha256: sha256(bytes),
      });
    }
  return records.sort((a, b) => a.id - b.id);
}

/** The mirror's attachments table of a layer's table (`<table>__attachments`), ordered by id. */
export async function mirroredAttachments(client: pg.ClientBase, schema: string, table: string): Promise<MirroredAttachment[]> {
  const { rows } = await client.query<Record<string, unknown>>(
    'SELECT attachment_id, global_id, parent_object_id, parent_global_id, name, content_type, size, keywords, sha256, data ' +
      `FROM ${qualifiedName(schema, attachmentTableOf(table))} ORDER BY attachment_id`,
  );
  return rows.map((row) => ({
    id: Number(row.attachment_id),
    globalId: row.global_id as string | null,
    parentObjectId: Number(row.parent_object_id),
    parentGlobalId: row.parent_global_id as string | null,
    name: row.name as string,
    contentType: row.content_type as string,
    size: Number(row.size),
    keywords: row.keywords as string | null,
    sha256: row.sha256 as string,
    data: row.data === null ? null : sha256(row.data as Buffer),
  }));
}

/** An attachment where the mirror and the server differ, by id: missing, extra, other metadata, or another hash. */
export interface AttachmentDifference {
  id: number;
  kind: 'missing' | 'extra' | 'changed' | 'hash';
}

/**
 * Where the mirror's attachments and the server's differ: an attachment missing from the table, one extra in it, one
 * whose SHA-256 (or kept bytes) differ (`hash`), or else whose metadata differ (`changed`).
 */
export function attachmentDifferences(
  mirrored: readonly MirroredAttachment[],
  server: readonly AttachmentRecord[],
): AttachmentDifference[] {
  const byId = new Map(mirrored.map((row) => [row.id, row]));
  const differences: AttachmentDifference[] = [];
  for (const expected of server) {
    const row = byId.get(expected.id);
    byId.delete(expected.id);
    if (row === undefined) differences.push({ id: expected.id, kind: 'missing' });
    else if (row.sha256 !== expected.sha256 || (row.data !== null && row.data !== expected.sha256))
      differences.push({ id: expected.id, kind: 'hash' });
    else if ((Object.keys(expected) as (keyof AttachmentRecord)[]).some((key) => row[key] !== expected[key]))
      differences.push({ id: expected.id, kind: 'changed' });
  }
  for (const id of byId.keys()) differences.push({ id, kind: 'extra' });
  return differences.sort((a, b) => a.id - b.id);
}
