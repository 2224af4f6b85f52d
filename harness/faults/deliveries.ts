import { createHash } from 'node:crypto';
import { sign } from '../../src/signature/sign.js';

/** The key of the `default` hook (HOOK_SECRETS of every receiver of the suite, the emulator's signatureKey). */
export const FAULTS_SECRET = 'geohook-faults-secret-7d3e91';
/** The header the GIS server signs in; geohook looks at it first. */
export const SIGNATURE_HEADER = 'x-service';
export const WEBHOOK_PATH = '/webhooks/default';

/** One delivery of the load: its exact bytes, the header value and the event id geohook will give it. */
export interface SignedDelivery {
  body: Buffer;
  signature: string;
  /** SHA-256 hex of the body: the envelope's `id`. */
  eventId: string;
}

/** The event id geohook gives a body: SHA-256 hex of its exact bytes. */
export function eventIdOf(body: Buffer): string {
  return createHash('sha256').update(body).digest('hex');
}

/**
 * Delivery `index` of scenario `tag`: a geoprocessing job outcome as the GIS server sends it. The job id
 * carries the tag and the index, so every body of a run (and its event id) is distinct.
 */
export function signedDelivery(tag: string, index: number): SignedDelivery {
  const jobId = `j-${tag}-${index}`;
  const body = Buffer.from(
    JSON.stringify({
      serviceType: 'GPServer',
      jobId,
      statusURL: `http://127.0.0.1:7080/arcgis/rest/services/Tools/Buffer/GPServer/Buffer/jobs/${jobId}`,
      name: 'faults',
      taskName: 'Buffer',
      folderName: 'Tools',
      serviceName: 'Buffer',
      events: [{ eventType: 'esriJobSucceeded', when: 1_700_000_000_000 + index }],
    }),
  );
  return { body, signature: sign(FAULTS_SECRET, body), eventId: eventIdOf(body) };
}
