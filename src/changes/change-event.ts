import { hash } from 'node:crypto';

/** What a change event says happened to a feature (Debezium's letters). */
export type ChangeOp = 'c' | 'u' | 'd' | 'r';

/**
 * The type of a change event. `change.entered` and `change.left` are the types a relay route, subscription or
 * `changes` service with `emit` takes a crossing of its `where` as (docs/changes.md#transitions).
 */
export type ChangeEventType =
  'change.created' | 'change.updated' | 'change.deleted' | 'change.read' | 'change.schema' | 'change.entered' | 'change.left';

/** A row as a change event carries it: attributes (BigInteger values as decimal strings) and, in a feature layer, geometry. */
export interface ChangeRow {
  attributes: Record<string, unknown>;
  geometry?: unknown;
  /** `current`: the row as the layer holds it now, read with `query`, not as of the range's end (servers that answer ids only). */
  asOf?: 'current';
}

/** How the change reached geohook: which range of server generations, and which of its changes it is. */
export interface ChangeSource {
  /** What moved the scope's watermark over the range: a delivery, a backfilled gap, a poll, a snapshot, a replay. */
  origin: 'webhook' | 'backfill' | 'poll' | 'snapshot' | 'replay';
  /** The range it was extracted from, `(from, to]`. */
  serverGens: [number, number];
  /** The feature event that carried the range, when one did. */
  parentEventId?: string;
  /** Every change event of one range: `index` from 0 in order, `total` of them. */
  transaction: { id: string; index: number; total: number };
}

/** An attachment a change event carries (docs/changes.md#attachments): its metadata and the SHA-256 of its bytes. */
export interface AttachmentEntry {
  id: number;
  globalId?: string;
  name: string;
  contentType: string;
  size: number;
  keywords?: string;
  /** SHA-256 hex of the bytes. */
  sha256: string;
  /** The feature it is attached to. */
  parentKey: { objectId?: number | string; globalId?: string };
  /** With `attachments: "link"`: a short-lived, signed geohook URL that streams the bytes (docs/changes.md#attachment-links). */
  url?: string;
}

/** The attachment changes of a feature in its range: added and updated ones described, deleted ones by id and GlobalID. */
export interface EventAttachments {
  adds: AttachmentEntry[];
  updates: AttachmentEntry[];
  deletes: { id?: number; globalId?: string }[];
}

/** One change of one feature (docs/changes.md#the-event): the job data of the `change-events` queue. */
export interface ChangeEvent {
  /** SHA-256 hex of hook, service, layer, key, op and version: the same feature version is one id, however it came. */
  id: string;
  type: ChangeEventType;
  /** Absent on `change.schema`. */
  op?: ChangeOp;
  hook: string;
  service: { folderName?: string; serviceName: string; serviceType: 'FeatureServer'; url: string; orgId?: string };
  layer: { id: number; name: string };
  key: { objectId?: number | string; globalId?: string };
  /** The row after the change; null for deletes. */
  after: ChangeRow | null;
  /** The tracked fields before the change: null for creates, absent when geohook does not know them. */
  before?: ChangeRow | null;
  /** Updates whose previous values are known: the tracked fields whose value changed (`[]` when only the geometry moved). */
  changedFields?: string[];
  /** Whether the geometry differs from the last one geohook saw of the feature (it keeps a hash). */
  geometryChanged?: boolean;
  source: ChangeSource;
  /** From editor tracking, when the layer has it. */
  editor?: { user?: string; at?: string };
  /** ISO 8601: the edit's time from editor tracking, else when geohook extracted it. */
  ts: string;
  /** `change.schema`: the fields added and removed. */
  schema?: { added: string[]; removed: string[] };
  /** With `attachments: "metadata"` or `"link"`: the changes of the feature's attachments in the range, when it has any. */
  attachments?: EventAttachments;
}

/** The queue change events go to. */
export const changeEventsQueueName = 'change-events';

const typeOfOp: Readonly<Record<ChangeOp, ChangeEventType>> = {
  c: 'change.created',
  u: 'change.updated',
  d: 'change.deleted',
  r: 'change.read',
};

/** The event type of an operation. */
export const changeTypeOf = (op: ChangeOp): ChangeEventType => typeOfOp[op];

/**
 * The id of a feature version: SHA-256 of hook, service, layer, key (GlobalID, else object id), op and version. A
 * create and a delete have no version (a feature is created and deleted once); an update's version is its edit
 * time from editor tracking, else a digest of its row. A schema change (`s`) is keyed `schema`, its version the
 * layer's field names.
 */
export function changeEventId(parts: {
  hook: string;
  service: string;
  layerId: number;
  key: string;
  op: ChangeOp | 's';
  version: string;
}): string {
  const { hook, service, layerId, key, op, version } = parts;
  return hash('sha256', [hook, service, String(layerId), key, op, version].join('\n'));
}
