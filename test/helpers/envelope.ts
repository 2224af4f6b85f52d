import { createHash, randomUUID } from 'node:crypto';
import type { EventFamily, GeohookEvent } from '../../src/queue/envelope.js';

/** A valid envelope of `family`, with distinct bytes unless `body` is given. */
export function envelopeOf(family: EventFamily, hook = 'default', body = `{"n":"${randomUUID()}"}`): GeohookEvent {
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
    payload: JSON.parse(body) as unknown,
    rawBody: Buffer.from(body).toString('base64'),
  };
}
