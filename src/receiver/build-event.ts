import { createHash } from 'node:crypto';
import { featureChangesOf } from '../arcgis/changes-url.js';
import type { GeohookEvent } from '../queue/envelope.js';
import { classifyEvent } from './classify-event.js';
import { classifiable } from './form-payload.js';

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
  /** The parsed body (form fields decoded; a field holding JSON parsed). */
  payload: unknown;
  /** True for a form body: its classification looks into the fields. */
  isForm: boolean;
}

/** The event envelope of a delivery (docs/events.md): its id, classification and the time it was received. */
export function buildEvent(delivery: AcceptedDelivery): GeohookEvent {
  const { raw, hook, contentType, verified, payload, isForm } = delivery;
  const classified = classifiable(payload, isForm);
  const { family, types, service } = classifyEvent(classified);
  const changes = family === 'feature' ? featureChangesOf(Array.isArray(classified) ? classified[0] : classified) : undefined;
  return {
    id: createHash('sha256').update(raw).digest('hex'),
    hook,
    type: types[0]!,
    types,
    family,
    receivedAt: new Date().toISOString(),
    service,
    contentType,
    verified,
    payload,
    rawBody: raw.toString('base64'),
    ...(changes === undefined ? {} : { changes }),
  };
}
