import { hash } from 'node:crypto';
import { changesLocationOf } from '../arcgis/changes-url.js';
import type { ServiceLocator } from '../arcgis/service-locator.js';
import { classifyEvent } from './classify-event.js';
import type { StoredEvent } from './envelope.js';
import { activityOf, type ServiceActivity } from './service-activity.js';
import { storedBody } from './stored-event.js';
import { trackedRangesOf, type TrackedRange } from './tracked-ranges.js';

/** An authenticated delivery, as the webhook route has it. */
export interface AcceptedDelivery {
  /** The exact bytes received. */
  raw: Buffer;
  /** Name of the hook it came to. */
  hook: string;
  /** Media type without parameters. */
  contentType: string;
  /** True when a signature was checked and matched. */
  verified: boolean;
  /** Form bodies: the parsed payload, stored with the event (a JSON payload is the body itself). */
  formPayload?: unknown;
  /** What classification reads: the payload, or for a form its `payload` field (see `classifiable`). */
  classified: unknown;
}

/** An event with what it hands over: what `EventQueue.enqueue` takes, built once from the parsed payload. */
export interface AcceptedEvent {
  /** The job data. */
  event: StoredEvent;
  /** The ranges of server generations it hands over (docs/backfill.md), checked against and moving the watermarks. */
  ranges: readonly TrackedRange[];
  /** What it tells of its service, recorded with the time. */
  activity: ServiceActivity | undefined;
}

/**
 * The accepted event of a delivery: its stored event, the ranges it covers at URLs `locator` trusts, and its
 * activity, from the payload the receiver parsed.
 */
export function buildEvent(delivery: AcceptedDelivery, locator: ServiceLocator): AcceptedEvent {
  const event = buildStoredEvent(delivery, (url) => locator.trusted(delivery.hook).trusts(url));
  return { event, ranges: trackedRangesOf(event, delivery.classified, locator), activity: activityOf(event) };
}

/**
 * The stored event of a delivery (docs/events.md): its id, classification, the time it was received and its bytes;
 * `trustsUrl` says whether its `changes.url` is one geohook trusts (`changes.trusted`).
 */
export function buildStoredEvent(delivery: AcceptedDelivery, trustsUrl: (url: URL) => boolean): StoredEvent {
  const { raw, hook, contentType, verified, classified } = delivery;
  const { family, types, service } = classifyEvent(classified);
  const location = family === 'feature' ? changesLocationOf(Array.isArray(classified) ? classified[0] : classified) : undefined;
  const changes = location === undefined ? undefined : { ...location, trusted: trustsUrl(new URL(location.url)) };
  return {
    id: hash('sha256', raw),
    hook,
    type: types[0]!,
    types,
    family,
    receivedAt: new Date().toISOString(),
    service,
    contentType,
    verified,
    ...storedBody(raw),
    ...('formPayload' in delivery ? { payload: delivery.formPayload } : {}),
    ...(changes === undefined ? {} : { changes }),
  };
}
