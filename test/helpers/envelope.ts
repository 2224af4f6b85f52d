import { createHash, randomUUID } from 'node:crypto';
import type { AcceptedEvent } from '../../src/events/build-event.js';
import type { EventFamily, GeohookEvent, StoredEvent } from '../../src/events/envelope.js';
import { activityOf } from '../../src/events/service-activity.js';
import { eventFromStored } from '../../src/events/stored-event.js';

/** A valid stored event of `family`, with distinct bytes unless `body` is given. */
export function envelopeOf(family: EventFamily, hook = 'default', body = `{"n":"${randomUUID()}"}`): StoredEvent {
  const type = { gp: 'gp.job.failed', feature: 'feature.FeaturesCreated', unknown: 'unknown' }[family];
  return {
    id: createHash('sha256').update(body).digest('hex'),
    hook,
    type,
    types: [type],
    family,
    receivedAt: new Date().toISOString(),
    service: {},
    contentType: 'application/json',
    verified: true,
    bodyEncoding: 'utf8',
    body,
  };
}

/** A stored event as the queue takes it: with no ranges of server generations, and the activity it records. */
export const accepted = (event: StoredEvent): AcceptedEvent => ({ event, ranges: [], activity: activityOf(event) });

/** The event a consumer gets of a job's data (payload parsed, raw bytes as base64). */
export function eventOf(job: { data: unknown }): GeohookEvent {
  return eventFromStored(job.data as StoredEvent);
}
