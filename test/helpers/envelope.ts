import { createHash, randomUUID } from 'node:crypto';
import type { EventFamily, GeohookEvent, StoredEvent } from '../../src/events/envelope.js';
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

/** The event a consumer gets of a job's data (payload parsed, raw bytes as base64). */
export function eventOf(job: { data: unknown }): GeohookEvent {
  return eventFromStored(job.data as StoredEvent);
}
