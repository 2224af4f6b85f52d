import { createHash } from 'node:crypto';
import type { AttachmentLinkTarget } from '../arcgis/attachment-link-target.js';
import type { ChangeFile } from '../arcgis-request/change-file.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { unlessGone } from '../arcgis-request/unless-gone.js';
import { GeohookError } from '../errors.js';
import type { AttachmentEntry, EventAttachments } from './change-event.js';

/** An attachment as `extractChanges` (`returnAttachments=true`) lists it: by `url`, or with its bytes as `data`. */
export interface ListedAttachment {
  attachmentId?: unknown;
  id?: unknown;
  globalId?: unknown;
  parentGlobalId?: unknown;
  name?: unknown;
  contentType?: unknown;
  size?: unknown;
  keywords?: unknown;
  url?: unknown;
  data?: unknown;
}

/** A range's attachment changes, by layer and parent GlobalID (`<layer>\n<GUID>`), read from its change file. */
export type RangeAttachments = Map<
  string,
  { adds: ListedAttachment[]; updates: ListedAttachment[]; deletes: { id?: number; globalId: string }[] }
>;

/** Where the parents of attachments are kept: `deleteIds` names a deleted attachment by its GlobalID only. */
export interface AttachmentParents {
  /** Records the parents of attachments added or updated, by layer. */
  record(layerId: number, entries: { globalId: string; parentGlobalId: string; id: number }[]): Promise<void>;
  /** The parents of attachments by GlobalID, by layer; none for one never seen. */
  read(layerId: number, globalIds: string[]): Promise<({ parentGlobalId: string; id: number } | undefined)[]>;
  /** Forgets the parents of attachments deleted, by layer, once the events naming them are written. */
  forget(layerId: number, globalIds: string[]): Promise<void>;
}

/** Bytes of an answer kept to tell an error body (JSON in an HTTP 200) from the attachment's bytes. */
const ERROR_PROBE_BYTES = 64 * 1024;

const UUID = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i;

/** A GUID as `{XXXXXXXX-…}` in upper case, whatever way the server wrote it; undefined for anything else. */
export const normalizeGuid = (value: unknown): string | undefined => {
  const match = typeof value === 'string' ? UUID.exec(value.trim()) : null;
  return match === null ? undefined : `{${match[1]!.toUpperCase()}}`;
};

const parentKeyOf = (layerId: number, globalId: string): string => `${layerId}\n${globalId}`;

/**
 * Reads the attachment lists of a change file (small: metadata and URLs) and groups them by parent: a deleted
 * attachment under the parent `parents` kept of it (one never seen added is left out), each added or updated one
 * recorded there.
 */
export async function readRangeAttachments(file: ChangeFile, parents: AttachmentParents): Promise<RangeAttachments> {
  const found: RangeAttachments = new Map();
  const entryOf = (key: string) => {
    if (!found.has(key)) found.set(key, { adds: [], updates: [], deletes: [] });
    return found.get(key)!;
  };
  for (const [index, list] of file.lists.entries()) {
    if (!list.kind.startsWith('attachments.') || list.length === 0) continue;
    const elements = await file.read(index, 0, list.length);
    if (list.kind === 'attachments.deleteIds') {
      const globalIds = elements.map(normalizeGuid).filter((id): id is string => id !== undefined);
      const known = await parents.read(list.layerId, globalIds);
      globalIds.forEach((globalId, at) => {
        const parent = known[at];
        if (parent !== undefined) entryOf(parentKeyOf(list.layerId, parent.parentGlobalId)).deletes.push({ id: parent.id, globalId });
      });
      continue;
    }
    const seen: { globalId: string; parentGlobalId: string; id: number }[] = [];
    for (const element of elements) {
      const listed = (element ?? {}) as ListedAttachment;
      const parent = normalizeGuid(listed.parentGlobalId);
      if (parent === undefined) continue;
      entryOf(parentKeyOf(list.layerId, parent))[list.kind === 'attachments.adds' ? 'adds' : 'updates'].push(listed);
      const globalId = normalizeGuid(listed.globalId);
      const id = typeof listed.attachmentId === 'number' ? listed.attachmentId : listed.id;
      if (globalId !== undefined && typeof id === 'number') seen.push({ globalId, parentGlobalId: parent, id });
    }
    await parents.record(list.layerId, seen);
  }
  return found;
}

/** The parents (layer id and GlobalID) of the range's attachment changes. */
export function changedParents(found: RangeAttachments): { layerId: number; globalId: string }[] {
  return [...found.keys()].map((key) => {
    const [layerId, globalId] = key.split('\n') as [string, string];
    return { layerId: Number(layerId), globalId };
  });
}

/** The GlobalIDs of the range's deleted attachments whose parent was kept, by layer. */
export function deletedAttachments(found: RangeAttachments): Map<number, string[]> {
  const byLayer = new Map<number, string[]>();
  for (const [key, { deletes }] of found) {
    if (deletes.length === 0) continue;
    const layerId = Number(key.split('\n')[0]);
    byLayer.set(layerId, [...(byLayer.get(layerId) ?? []), ...deletes.map(({ globalId }) => globalId)]);
  }
  return byLayer;
}

/** A digest of a feature's attachment changes: the version of an event that carries only them. */
export function attachmentsVersion(changes: EventAttachments): string {
  const lines = [
    ...changes.adds.map((entry) => `a${entry.globalId ?? entry.id}:${entry.sha256}`),
    ...changes.updates.map((entry) => `u${entry.globalId ?? entry.id}:${entry.sha256}`),
    ...changes.deletes.map((entry) => `d${entry.globalId ?? String(entry.id)}`),
  ].sort();
  return `a${createHash('sha256').update(lines.join('\n')).digest('hex')}`;
}

/** A layer's attachment changes in a range: those added or updated, and the GlobalIDs of those deleted. */
export interface LayerAttachmentChanges {
  upserts: ListedAttachment[];
  deletes: string[];
}

/** Reads every attachment list of a change file (small: metadata and URLs), by layer. */
export async function readAttachmentLists(file: ChangeFile): Promise<Map<number, LayerAttachmentChanges>> {
  const byLayer = new Map<number, LayerAttachmentChanges>();
  for (const [index, list] of file.lists.entries()) {
    if (!list.kind.startsWith('attachments.')) continue;
    if (!byLayer.has(list.layerId)) byLayer.set(list.layerId, { upserts: [], deletes: [] });
    const changes = byLayer.get(list.layerId)!;
    for (const element of await file.read(index, 0, list.length)) {
      if (list.kind !== 'attachments.deleteIds') changes.upserts.push((element ?? {}) as ListedAttachment);
      else {
        const globalId = normalizeGuid(element);
        if (globalId !== undefined) changes.deletes.push(globalId);
      }
    }
  }
  return byLayer;
}

/** An attachment's bytes read: their SHA-256, and the bytes themselves when they were asked to be kept. */
export interface ReadAttachment {
  sha256: string;
  bytes?: Buffer;
}

/**
 * The SHA-256 of an attachment's bytes, and the bytes when `keepBytes`: its inline `data`, else read from its `url`
 * in the session (with the token).
 */
export async function readAttachment(session: ServiceSession, listed: ListedAttachment, keepBytes = false): Promise<ReadAttachment> {
  if (typeof listed.data === 'string') {
    const bytes = Buffer.from(listed.data, 'base64');
    return { sha256: createHash('sha256').update(bytes).digest('hex'), ...(keepBytes ? { bytes } : {}) };
  }
  if (typeof listed.url !== 'string')
    throw new GeohookError('GEOHOOK_ERR_FOLLOW_UP', 'an attachment of the range has neither url nor data');
  const hashed = await session.readTo(new URL(listed.url), async (body) => {
    const hash = createHash('sha256');
    const probe: Buffer[] = [];
    const kept: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      hash.update(chunk);
      if (size < ERROR_PROBE_BYTES) probe.push(Buffer.from(chunk));
      if (keepBytes) kept.push(Buffer.from(chunk));
      size += chunk.length;
    }
    // An error answered in an HTTP 200 JSON body is an error (a refused token is then renewed once), not bytes.
    let root: Record<string, unknown> = {};
    if (size <= ERROR_PROBE_BYTES && Buffer.concat(probe).subarray(0, 9).toString() === '{"error":') {
      try {
        root = JSON.parse(Buffer.concat(probe).toString('utf8')) as Record<string, unknown>;
      } catch {
        root = {};
      }
    }
    return { root, sha256: hash.digest('hex'), bytes: Buffer.concat(kept), close: () => Promise.resolve() };
  });
  return { sha256: hashed.sha256, ...(keepBytes ? { bytes: hashed.bytes } : {}) };
}

/**
 * Makes the signed geohook URL of an attachment's bytes (`attachments: "link"`); `version`, the SHA-256 of the bytes,
 * gives one version the same link each time its event is resolved.
 */
export type AttachmentLinkOf = (target: AttachmentLinkTarget, version?: string) => Promise<string>;

/** The URL of an entry of the layer's, made by `linkOf`; none when its parent has no numeric object id. */
export type EntryLink = (entry: AttachmentEntry) => Promise<string | undefined>;

/** The {@link EntryLink} of the entries of a layer of `service`. */
export const entryLinkOf =
  (linkOf: AttachmentLinkOf, service: string, layerId: number): EntryLink =>
  async (entry) => {
    const { objectId } = entry.parentKey;
    if (typeof objectId !== 'number' || entry.id < 0) return undefined;
    return linkOf({ service, layerId, objectId, attachmentId: entry.id, contentType: entry.contentType, name: entry.name }, entry.sha256);
  };

/**
 * An attachment entry of an event, its bytes hashed, with its link when `link` is given; undefined when the server no
 * longer has it (its URL answers 404: it, or its feature, was deleted after the range's end), the later range that
 * deletes it saying so.
 */
async function entryOf(
  session: ServiceSession,
  listed: ListedAttachment,
  parentKey: AttachmentEntry['parentKey'],
  link?: EntryLink,
): Promise<AttachmentEntry | undefined> {
  const read = await unlessGone(readAttachment(session, listed));
  if (read === undefined) return undefined;
  const id = typeof listed.attachmentId === 'number' ? listed.attachmentId : typeof listed.id === 'number' ? listed.id : -1;
  const globalId = normalizeGuid(listed.globalId);
  const entry: AttachmentEntry = {
    id,
    ...(globalId === undefined ? {} : { globalId }),
    name: typeof listed.name === 'string' ? listed.name : '',
    contentType: typeof listed.contentType === 'string' ? listed.contentType : 'application/octet-stream',
    size: typeof listed.size === 'number' ? listed.size : 0,
    ...(typeof listed.keywords === 'string' && listed.keywords !== '' ? { keywords: listed.keywords } : {}),
    sha256: read.sha256,
    parentKey,
  };
  const url = await link?.(entry);
  return url === undefined ? entry : { ...entry, url };
}

/** The entries of `listed` still on the server, in order (docs/changes.md#attachments). */
const entriesOf = async (
  session: ServiceSession,
  listed: readonly ListedAttachment[],
  parentKey: AttachmentEntry['parentKey'],
  link?: EntryLink,
): Promise<AttachmentEntry[]> =>
  (await Promise.all(listed.map((entry) => entryOf(session, entry, parentKey, link)))).filter(
    (entry): entry is AttachmentEntry => entry !== undefined,
  );

/**
 * The attachment changes of the feature `parentKey` of `layerId` in the range, their bytes hashed, each with its URL
 * when `link` is given; undefined when it has none. An attachment added or updated that the server no longer has is
 * left out: the range that deleted it (or its feature) lists that delete.
 */
export async function attachmentsOf(
  session: ServiceSession,
  found: RangeAttachments,
  layerId: number,
  parentKey: AttachmentEntry['parentKey'],
  link?: EntryLink,
): Promise<EventAttachments | undefined> {
  const parent = normalizeGuid(parentKey.globalId);
  const listed = parent === undefined ? undefined : found.get(parentKeyOf(layerId, parent));
  if (listed === undefined) return undefined;
  return {
    adds: await entriesOf(session, listed.adds, parentKey, link),
    updates: await entriesOf(session, listed.updates, parentKey, link),
    deletes: listed.deletes,
  };
}
