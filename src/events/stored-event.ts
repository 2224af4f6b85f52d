import { isUtf8 } from 'node:buffer';
import type { EventFields, EventSource, GeohookEvent, StoredEvent } from './envelope.js';
import { serviceNameOf } from './service-activity.js';

/** The body of a stored event: the exact bytes as text, UTF-8 when they are valid UTF-8, else base64. */
export function storedBody(raw: Buffer): Pick<StoredEvent, 'bodyEncoding' | 'body'> {
  return isUtf8(raw) ? { bodyEncoding: 'utf8', body: raw.toString('utf8') } : { bodyEncoding: 'base64', body: raw.toString('base64') };
}

/**
 * True for a webhook delivery no signature vouched for (`verified: false`, accepted with REQUIRE_SIGNATURE=false):
 * whoever reached the receiver may have sent it. Backfilled and polled events are geohook's own, read at trusted
 * URLs: never unverified deliveries.
 */
export const isUnverifiedDelivery = (event: Pick<EventFields, 'verified'> & { source?: EventSource | undefined }): boolean =>
  !event.verified && (event.source ?? 'webhook') === 'webhook';

/** A JSON body parsed as the receiver parsed it: a leading byte order mark is not part of the JSON. */
function parseJsonBody(text: string): unknown {
  return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown;
}

/** The payload of a stored event: the one stored (forms), else the body parsed. Throws when a JSON body does not parse. */
export function storedPayload(stored: StoredEvent): unknown {
  if ('payload' in stored) return stored.payload;
  return parseJsonBody(stored.bodyEncoding === 'utf8' ? stored.body : Buffer.from(stored.body, 'base64').toString('utf8'));
}

/**
 * The consumer's event of a stored one: the raw bytes as base64 and, unless the payload was stored (forms),
 * the payload parsed from the body. Throws when a JSON body does not parse (it was not stored by geohook).
 */
export function eventFromStored(stored: StoredEvent): GeohookEvent {
  const { bodyEncoding, body, payload: _payload, changes, ...fields } = stored;
  const event: GeohookEvent = {
    ...(fields satisfies Omit<EventFields, 'changes'>),
    source: stored.source ?? 'webhook',
    payload: storedPayload(stored),
    rawBody: bodyEncoding === 'base64' ? body : Buffer.from(body, 'utf8').toString('base64'),
  };
  if (changes !== undefined) event.changes = changes;
  return event;
}

/**
 * Job data as people are shown it (the dashboard): a stored event as its consumer gets it, with its `payload`
 * but not the `rawBody` bytes in base64, which no person reads; anything else (a job geohook did not write) as it is.
 */
export function readableJobData(data: unknown): unknown {
  const stored = data as Partial<StoredEvent> | null;
  if (typeof stored?.body !== 'string' || (stored.bodyEncoding !== 'utf8' && stored.bodyEncoding !== 'base64')) return data;
  try {
    const { rawBody: _rawBody, ...readable } = eventFromStored(stored as StoredEvent);
    return readable;
  } catch {
    return data;
  }
}

/** The GP job id a stored geoprocessing delivery names (its payload's `jobId`); undefined for anything else. */
export function gpJobIdOf(data: unknown): string | undefined {
  const payload = (readableJobData(data) as { payload?: { jobId?: unknown } } | null)?.payload;
  return typeof payload?.jobId === 'string' ? payload.jobId : undefined;
}

/**
 * A job's title as people are shown it (the dashboard): `<type> · <service> · <short id>` for a stored event, then
 * `job <GP job id>` for a geoprocessing delivery that names one; its name otherwise.
 */
export function readableJobName(job: { name?: string; data?: unknown }): string {
  const event = job.data as Partial<StoredEvent> | null | undefined;
  if (typeof event?.id !== 'string' || typeof event.type !== 'string' || event.service === undefined || event.family === undefined)
    return job.name ?? '';
  const service = serviceNameOf({ service: event.service, family: event.family });
  const gpJobId = event.family === 'gp' ? gpJobIdOf(event) : undefined;
  return [event.type, service, event.id.slice(0, 12), gpJobId === undefined ? undefined : `job ${gpJobId}`]
    .filter((part) => part !== undefined)
    .join(' · ');
}
