import { createHash } from 'node:crypto';
import type { AttachmentEntry, ChangeEvent, ChangeRow } from './change-event.js';

/** A feature of a submission: its layer, its key and its row as created. */
export interface SubmissionFeature {
  layer: { id: number; name: string };
  key: ChangeEvent['key'];
  after: ChangeRow | null;
}

/**
 * `change.submission` (docs/submissions.md): one submission — a parent feature created with related rows and/or
 * attachments — with every part of it. The job data of the `change-events` queue, beside the per-feature events.
 */
export interface SubmissionEvent {
  /** SHA-256 hex of hook, service and the parent's key: one submission is one id, whoever closes it. */
  id: string;
  type: 'change.submission';
  hook: string;
  service: ChangeEvent['service'];
  /** The parent's layer and key: what routes' `services`, `layers` and `where` read (the `where` on the parent's row). */
  layer: { id: number; name: string };
  key: ChangeEvent['key'];
  parent: SubmissionFeature;
  /** The rows created in the related layers (Survey123's repeats), by layer then object id. */
  related: SubmissionFeature[];
  /** The attachments added to the parent and to its related rows, each with `parentKey`, by layer then id. */
  attachments: (AttachmentEntry & { layer: number })[];
  /** `survey123`: its Survey123 webhook closed it; `window`: no part came for the service's `submissionWindowMs`. */
  closedBy: 'survey123' | 'window';
  /** ISO 8601: the parent's `ts`. */
  ts: string;
}

/** What the resolver keeps of a submission's parent: the feature and what its event needs. */
export interface ParentPart extends SubmissionFeature {
  hook: string;
  serviceName: string;
  service: ChangeEvent['service'];
  ts: string;
}

/** The id of the submission of a parent: SHA-256 of hook, service and the parent's layer and key (GlobalID, else object id). */
export function submissionEventId(hook: string, serviceName: string, parent: Pick<SubmissionFeature, 'layer' | 'key'>): string {
  const key = parent.key.globalId ?? `o${String(parent.key.objectId)}`;
  return createHash('sha256')
    .update([hook, serviceName, String(parent.layer.id), key, 'submission'].join('\n'))
    .digest('hex');
}

const objectIdOf = (feature: SubmissionFeature): number => (typeof feature.key.objectId === 'number' ? feature.key.objectId : 0);

/** The `change.submission` of a parent and its parts, in a stable order whoever builds it. */
export function buildSubmissionEvent(
  parent: ParentPart,
  related: readonly SubmissionFeature[],
  attachments: readonly (AttachmentEntry & { layer: number })[],
  closedBy: SubmissionEvent['closedBy'],
): SubmissionEvent {
  const { hook, serviceName, service, ts, ...feature } = parent;
  return {
    id: submissionEventId(hook, serviceName, feature),
    type: 'change.submission',
    hook,
    service,
    layer: feature.layer,
    key: feature.key,
    parent: feature,
    related: [...related].sort((a, b) => a.layer.id - b.layer.id || objectIdOf(a) - objectIdOf(b)),
    attachments: [...attachments].sort((a, b) => a.layer - b.layer || a.id - b.id),
    closedBy,
    ts,
  };
}
