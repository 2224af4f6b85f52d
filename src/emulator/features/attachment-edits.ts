import { randomUUID } from 'node:crypto';
import { AdminError, invalidParameter } from '../admin-error.js';
import type { Attachment, AttachmentOp } from './attachments.js';
import type { FeatureLayer } from './feature-layer.js';
import { normalizeGuid, type EditError } from './field-values.js';

/** One layer's `attachments` of an `applyEdits` call, as read from the request. */
export interface AttachmentEdits {
  adds: unknown[];
  updates: unknown[];
  deletes: unknown[];
}

/** An attachment edit result, as the product answers it: the attachment's id as `objectId`, and its GlobalID. */
export interface AttachmentResult {
  objectId: number;
  globalId: string | null;
  success: boolean;
  error?: EditError;
}

/** A layer's attachment results, under `attachments` in its `applyEdits` results. */
export interface AttachmentResults {
  addResults: AttachmentResult[];
  updateResults: AttachmentResult[];
  deleteResults: AttachmentResult[];
}

/** A change an `applyEdits` call makes to one attachment, checked and ready to apply. */
export interface PlannedAttachmentChange {
  layer: FeatureLayer;
  op: AttachmentOp;
  attachment: Attachment;
}

/** The largest attachment the emulator keeps, in bytes. */
export const MAX_ATTACHMENT_BYTES = 64 * 1024 * 1024;

const MISSING: EditError = { code: 1011, description: 'Object is missing.' };
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]);

/** A layer's `attachments: {adds, updates, deletes}`; refused unless the call names features by GlobalID and the layer takes attachments. */
export function readAttachmentEdits(layer: FeatureLayer, value: unknown, useGlobalIds: boolean): AttachmentEdits | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalidParameter('attachments', 'must be an object such as {"adds":[…],"updates":[…],"deletes":[…]}');
  if (!useGlobalIds) throw invalidParameter('attachments', 'applies only with useGlobalIds=true');
  if (layer.definition.hasAttachments !== true)
    throw new AdminError(400, 'Unable to complete operation.', `Layer ${layer.id} does not support attachments.`);
  const { adds, updates, deletes } = value as Record<string, unknown>;
  const deleteList = typeof deletes === 'string' ? deletes.split(',').filter((id) => id.trim() !== '') : listOf(deletes);
  return { adds: listOf(adds), updates: listOf(updates), deletes: deleteList };
}

/** The bytes of an attachment edit: `data` as base64 (or bytes, from a multipart upload). */
function bytesOf(data: unknown): Buffer | EditError {
  if (Buffer.isBuffer(data)) return data;
  if (typeof data !== 'string' || !BASE64.test(data))
    return { code: 1000, description: "An attachment needs 'data', its bytes in base64." };
  const bytes = Buffer.from(data, 'base64');
  return bytes.length > MAX_ATTACHMENT_BYTES ? { code: 1000, description: 'The attachment is too large.' } : bytes;
}

const text = (value: unknown, fallback: string): string => (typeof value === 'string' && value.trim() !== '' ? value : fallback);

/** The attachment an add creates under the parent `parent` (its object id and GlobalID), or why it cannot. */
export function attachmentToAdd(
  layer: FeatureLayer,
  input: unknown,
  parent: (globalId: string) => number | undefined,
  exists: (globalId: string) => boolean,
): { attachment: Attachment } | { error: EditError; globalId: string | null } {
  const given = (input ?? {}) as Record<string, unknown>;
  const globalId = given.globalId === undefined ? `{${randomUUID().toUpperCase()}}` : normalizeGuid(given.globalId);
  const parentGlobalId = normalizeGuid(given.parentGlobalId);
  if (globalId === undefined) return { error: { code: 1000, description: "An attachment's globalId must be a GUID." }, globalId: null };
  const parentObjectId = parentGlobalId === undefined ? undefined : parent(parentGlobalId);
  if (parentObjectId === undefined) return { error: MISSING, globalId };
  if (exists(globalId))
    return { error: { code: 1022, description: 'Unique constraint violation error on inserting the value.' }, globalId };
  const data = bytesOf(given.data);
  if (!Buffer.isBuffer(data)) return { error: data, globalId };
  const attachment: Attachment = Object.freeze({
    id: layer.attachments.nextId(),
    globalId,
    parentObjectId,
    parentGlobalId: parentGlobalId!,
    name: text(given.name, 'attachment'),
    contentType: text(given.contentType, 'application/octet-stream'),
    keywords: typeof given.keywords === 'string' ? given.keywords : '',
    data,
  });
  return { attachment };
}

/** `before` with what an update gives: new bytes, and the name, content type or keywords when given. */
export function attachmentUpdated(before: Attachment, input: unknown): { attachment: Attachment } | { error: EditError } {
  const given = (input ?? {}) as Record<string, unknown>;
  const data = given.data === undefined ? before.data : bytesOf(given.data);
  if (!Buffer.isBuffer(data)) return { error: data };
  return {
    attachment: Object.freeze({
      ...before,
      name: text(given.name, before.name),
      contentType: text(given.contentType, before.contentType),
      keywords: typeof given.keywords === 'string' ? given.keywords : before.keywords,
      data,
    }),
  };
}

/** The GlobalID an update or delete names (`{globalId}` or the bare GUID), if it is one. */
export const attachmentKey = (input: unknown): string | undefined =>
  normalizeGuid(typeof input === 'string' ? input : (input as { globalId?: unknown } | null)?.globalId);
