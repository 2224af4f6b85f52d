import { hash } from 'node:crypto';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import { normalizeGuid } from './attachment-changes.js';
import type { ChangeEvent } from './change-event.js';
import { encodeParentRef } from './parent-ref.js';
import type { ParentPart, SubmissionFeature } from './submission-event.js';

/**
 * A part of a submission to record: its submission, its field in the submission's hash (`parent`, `r:…`, `a:…`, or
 * `ref`: a parent kept as a reference, {@link ParentRef}), and its JSON (a reference's encoding).
 */
export interface SubmissionPart {
  submission: string;
  field: string;
  json: string;
  /** A parent: `<hook>\n<GlobalID>`, what its Survey123 webhook names. */
  parentOf?: string;
}

/** A submission's id: SHA-256 of hook, service and the parent's key value (what its related rows hold). */
const submissionOf = (hook: string, serviceName: string, anchor: string): string =>
  hash('sha256', [hook, serviceName, anchor].join('\n')).slice(0, 32);

/** A key value as submissions match it: a GUID in one spelling, anything else as text; undefined when empty. */
const anchorOf = (value: unknown): string | undefined =>
  value === null || value === undefined || value === '' ? undefined : (normalizeGuid(value) ?? String(value));

const featureOf = (event: ChangeEvent): SubmissionFeature => ({ layer: event.layer, key: event.key, after: event.after });

/** A parent's part: its row in full when `full` (another part of its submission came with it), else a reference to it. */
function parentPartOf(event: ChangeEvent, serviceName: string, submission: string, full: boolean): SubmissionPart {
  const globalId = normalizeGuid(event.key.globalId);
  const { objectId } = event.key;
  const parentOf = globalId === undefined ? {} : { parentOf: `${event.hook}\n${globalId}` };
  if (!full && typeof objectId === 'number') {
    const ref = { hook: event.hook, serviceName, layerId: event.layer.id, objectId, ts: event.ts };
    const { globalId: spelled } = event.key;
    return { submission, field: 'ref', json: encodeParentRef(spelled === undefined ? ref : { ...ref, globalId: spelled }), ...parentOf };
  }
  const parent: ParentPart = { ...featureOf(event), hook: event.hook, serviceName, service: event.service, ts: event.ts };
  return { submission, field: 'parent', json: JSON.stringify(parent), ...parentOf };
}

/**
 * The submission parts of created features (docs/submissions.md): a feature of a layer that is no relationship's
 * destination is a parent, keyed by its origin key field (Survey123: `globalid`), else its GlobalID; a row of a
 * destination layer is a related row of the parent its key field names (`parentglobalid`); the attachments added
 * to either are parts of the same submission. Other events have none. A parent is kept in full only when another
 * part of its submission is among `events`; alone, as a reference (most created features are no submission).
 */
export function submissionPartsOf(events: readonly ChangeEvent[], layers: readonly LayerInfo[], serviceName: string): SubmissionPart[] {
  const parts: SubmissionPart[] = [];
  const parents: { at: number; event: ChangeEvent }[] = [];
  const withOthers = new Set<string>();
  for (const event of events) {
    if (event.type !== 'change.created' || event.after === null) continue;
    const layer = layers.find(({ id }) => id === event.layer.id);
    if (layer === undefined) continue;
    const attributes = event.after.attributes;
    const child = layer.relationships.find(
      (relation) => relation.role === 'destination' && layers.some(({ id }) => id === relation.relatedTableId),
    );
    const origin = layer.relationships.find((relation) => relation.role === 'origin');
    const adds = event.attachments?.adds ?? [];
    if (child === undefined && origin === undefined && adds.length === 0) continue;
    const anchor = anchorOf(
      child !== undefined ? attributes[child.keyField] : origin !== undefined ? attributes[origin.keyField] : event.key.globalId,
    );
    if (anchor === undefined) continue;
    const submission = submissionOf(event.hook, serviceName, anchor);
    const rowKey = event.key.globalId ?? `o${String(event.key.objectId)}`;
    if (child !== undefined) {
      parts.push({ submission, field: `r:${layer.id}:${rowKey}`, json: JSON.stringify(featureOf(event)) });
      withOthers.add(submission);
    } else {
      parents.push({ at: parts.length, event });
      parts.push({ submission, field: '', json: '' });
    }
    for (const entry of adds) {
      parts.push({ submission, field: `a:${layer.id}:${entry.id}`, json: JSON.stringify({ ...entry, layer: layer.id }) });
      withOthers.add(submission);
    }
  }
  for (const { at, event } of parents) {
    const { submission } = parts[at]!;
    parts[at] = parentPartOf(event, serviceName, submission, withOthers.has(submission));
  }
  return parts;
}
