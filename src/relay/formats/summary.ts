import type { GpJobPayload } from '../../arcgis/payload.js';
import type { ChangeEvent } from '../../changes/change-event.js';
import type { StoredEvent } from '../../events/envelope.js';
import { serviceNameOf } from '../../events/service-activity.js';
import { isUnverifiedDelivery, storedPayload } from '../../events/stored-event.js';
import { filteredChange, isChangeEvent, type RoutedEvent } from '../../fanout/routed-event.js';
import { eventTime } from '../relay-event.js';

/** An attachment of a change event as a channel shows it: its name, and its link when the event carries one. */
export interface SummaryAttachment {
  name: string;
  /** A signed geohook URL of the bytes (`attachments: "link"`). */
  url?: string;
  /** A PNG, JPEG, GIF, WebP, BMP or AVIF image: shown as a picture where the channel can. */
  image: boolean;
}

/** Content types a channel shows as a picture. */
const IMAGE_TYPES = /^image\/(png|jpeg|gif|webp|bmp|avif)$/i;

/** The attachments a change event added or updated, or a submission's, in their order (none for other events). */
export function summaryAttachments(event: RoutedEvent): SummaryAttachment[] {
  if (!isChangeEvent(event) || event.attachments === undefined) return [];
  const entries = Array.isArray(event.attachments) ? event.attachments : [...event.attachments.adds, ...event.attachments.updates];
  return entries.map((entry) => ({
    name: entry.name === '' ? `attachment ${entry.id}` : entry.name,
    ...(entry.url === undefined ? {} : { url: entry.url }),
    image: IMAGE_TYPES.test(entry.contentType),
  }));
}

/** One name/value pair shown under the summary line (a Teams FactSet, Slack context). */
export interface SummaryFact {
  title: string;
  value: string;
}

/** What a person reads of an event in a channel: one line, then a few facts. Plain text, not escaped. */
export interface EventSummary {
  line: string;
  facts: SummaryFact[];
}

/** What starts the line of a delivery no signature verified (accepted with REQUIRE_SIGNATURE=false). */
export const UNVERIFIED_PREFIX = 'UNVERIFIED: ';

/** Changed fields shown with their values; the others are counted. */
export const MAX_SHOWN_CHANGES = 3;

/** Longest value shown, in characters; a longer one is cut and ends with `…`. */
export const MAX_VALUE_CHARS = 60;

const cut = (text: string, max = MAX_VALUE_CHARS): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A field's value as shown: text as it is, `null` for no value, anything else as JSON; cut to {@link MAX_VALUE_CHARS}. */
export function showValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  return cut(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)));
}

/** The feature as shown: `{4F95…}` for a GlobalID (its first 4 characters), else `#<objectId>`, else nothing. */
export function showKey(key: ChangeEvent['key']): string {
  if (key.globalId !== undefined) return `{${key.globalId.replace(/^\{/, '').slice(0, 4)}…}`;
  return key.objectId === undefined ? '' : `#${key.objectId}`;
}

/** `field old → new` for each changed field whose previous value geohook knows. */
function changeParts(event: ChangeEvent): string[] {
  const before = event.before?.attributes;
  const after = event.after?.attributes ?? {};
  const fields = event.changedFields ?? [];
  const parts = fields
    .slice(0, MAX_SHOWN_CHANGES)
    .map((field) =>
      before && field in before
        ? `${field} ${showValue(before[field])} → ${showValue(after[field])}`
        : `${field} → ${showValue(after[field])}`,
    );
  if (fields.length > MAX_SHOWN_CHANGES) parts.push(`+${fields.length - MAX_SHOWN_CHANGES} more`);
  if (event.geometryChanged === true) parts.push('geometry moved');
  return parts;
}

function changeLine(event: ChangeEvent): string {
  const subject = [event.layer.name, showKey(event.key)].filter((part) => part !== '').join(' ');
  const by = event.editor?.user === undefined ? '' : ` by ${event.editor.user}`;
  switch (event.type) {
    case 'change.created':
      return `${subject} created${by}`;
    case 'change.deleted':
      return `${subject} deleted${by}`;
    case 'change.read':
      return `${subject} read by a snapshot`;
    case 'change.schema': {
      const { added = [], removed = [] } = event.schema ?? {};
      const parts = [added.length > 0 ? `added ${added.join(', ')}` : '', removed.length > 0 ? `removed ${removed.join(', ')}` : ''];
      return `${event.layer.name}: fields ${parts.filter((part) => part !== '').join('; ') || 'changed'}`;
    }
    case 'change.updated': {
      const parts = changeParts(event);
      return `${subject}: ${parts.length > 0 ? parts.join(', ') : 'updated'}${by}`;
    }
    case 'change.entered':
    case 'change.left': {
      const parts = event.op === 'u' ? changeParts(event) : [event.op === 'c' ? 'created' : 'deleted'];
      const verb = event.type === 'change.entered' ? 'entered the filter' : 'left the filter';
      return `${subject} ${verb}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}${by}`;
    }
  }
}

/** The first GP payload of a stored event, when its body parses to one. */
function gpPayload(event: StoredEvent): GpJobPayload | undefined {
  try {
    const payload = storedPayload(event);
    const first: unknown = Array.isArray(payload) ? payload[0] : payload;
    return typeof first === 'object' && first !== null ? (first as GpJobPayload) : undefined;
  } catch {
    return undefined;
  }
}

function storedLine(event: StoredEvent): string {
  const service = serviceNameOf(event) ?? `hook ${event.hook}`;
  if (event.family === 'gp') {
    const jobId = gpPayload(event)?.jobId;
    const outcome = event.type.replace(/^gp\.job\./, '');
    return `${service}: job ${typeof jobId === 'string' ? `${cut(jobId)} ` : ''}${outcome}`;
  }
  if (event.family === 'feature') {
    const layer = event.changes?.layerId === undefined ? '' : ` (layer ${event.changes.layerId})`;
    return `${service}${layer}: ${event.types.map((type) => type.replace(/^feature\./, '')).join(', ')}`;
  }
  return `${service}: an event geohook does not classify`;
}

/**
 * The summary of an event: "Parcels {4F95…}: status Open → Closed by inspector7", and its facts; a delivery no
 * signature verified starts with {@link UNVERIFIED_PREFIX} and says so in a `Verified` fact.
 */
export function summarizeEvent(event: RoutedEvent): EventSummary {
  if (!isChangeEvent(event)) {
    const service = serviceNameOf(event);
    const facts: SummaryFact[] = [{ title: 'Type', value: event.type }];
    if (service !== undefined) facts.push({ title: 'Service', value: service });
    facts.push({ title: 'Received', value: eventTime(event) }, { title: 'Event', value: event.id.slice(0, 12) });
    if (!isUnverifiedDelivery(event)) return { line: storedLine(event), facts };
    facts.push({ title: 'Verified', value: 'no: no signature, anyone who reached the receiver may have sent it' });
    return { line: `${UNVERIFIED_PREFIX}${storedLine(event)}`, facts };
  }
  const { folderName, serviceName } = event.service;
  const facts: SummaryFact[] = [
    { title: 'Type', value: event.type },
    { title: 'Service', value: folderName === undefined ? serviceName : `${folderName}/${serviceName}` },
    { title: 'Layer', value: `${event.layer.name} (${event.layer.id})` },
  ];
  const key = event.key.globalId ?? (event.key.objectId === undefined ? undefined : String(event.key.objectId));
  if (key !== undefined) facts.push({ title: 'Feature', value: key });
  const change = filteredChange(event);
  if (change.editor?.user !== undefined) facts.push({ title: 'Editor', value: change.editor.user });
  const attachments = summaryAttachments(event);
  if (attachments.length > 0) facts.push({ title: 'Attachments', value: showValue(attachments.map(({ name }) => name).join(', ')) });
  facts.push({ title: 'Time', value: event.ts }, { title: 'Event', value: event.id.slice(0, 12) });
  return { line: changeLine(change), facts };
}
