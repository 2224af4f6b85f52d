import { createHash } from 'node:crypto';
import { changesLocationOf } from '../arcgis/changes-url.js';
import { classifyEvent } from './classify-event.js';
import type { StoredEvent } from './envelope.js';
import { storedBody } from './stored-event.js';

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

/** The stored event of a delivery (docs/events.md): its id, classification, the time it was received and its bytes. */
export function buildEvent(delivery: AcceptedDelivery): StoredEvent {
  const { raw, hook, contentType, verified, classified } = delivery;
  const { family, types, service } = classifyEvent(classified);
  const changes = family === 'feature' ? changesLocationOf(Array.isArray(classified) ? classified[0] : classified) : undefined;
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
    ...storedBody(raw),
    ...('formPayload' in delivery ? { payload: delivery.formPayload } : {}),
    ...(changes === undefined ? {} : { changes }),
  };
}
