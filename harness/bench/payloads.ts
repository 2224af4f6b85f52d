import { sign } from '../../src/signature/sign.js';

/** The key every case verifies with (HOOK_SECRETS of the geohook case). */
export const BENCH_SECRET = 'geohook-bench-secret-4f1c2a';
/** The header the emulator (and the GIS server) signs in; geohook looks at it first. */
export const SIGNATURE_HEADER = 'x-service';
/** The route every case serves: geohook's `default` hook. */
export const WEBHOOK_PATH = '/webhooks/default';
export const BODY_BYTES = 1024;

/**
 * Delivery number `index`: a geoprocessing job outcome as the GIS server sends it, padded to exactly
 * {@link BODY_BYTES}. Its job id and time carry the index, so every body (and its SHA-256, geohook's event
 * id) is distinct and deduplication never flatters a case.
 */
export function benchBody(index: number): Buffer {
  const jobId = `j${index.toString(16).padStart(14, '0')}`;
  const payload = {
    serviceType: 'GPServer',
    jobId,
    statusURL: `http://127.0.0.1:7080/arcgis/rest/services/Tools/Buffer/GPServer/Buffer/jobs/${jobId}`,
    name: 'bench',
    taskName: 'Buffer',
    folderName: 'Tools',
    serviceName: 'Buffer',
    events: [{ eventType: 'esriJobSucceeded', when: 1_700_000_000_000 + index }],
    padding: '',
  };
  const text = JSON.stringify(payload);
  return Buffer.from(text.replace('"padding":""', `"padding":"${'x'.repeat(BODY_BYTES - Buffer.byteLength(text))}"`));
}

/**
 * Bodies and signatures precomputed before the load starts, so the load generator spends no HMAC time
 * while it measures. Past the pool, `distinct` bodies are made and signed on the fly (counted), and the
 * others repeat the pool.
 */
export class BodyPool {
  readonly size: number;
  private readonly bytes: Buffer;
  private readonly signatures: string[];
  /** Bodies made on the fly because the pool was used up. */
  signedOnTheFly = 0;

  constructor(size: number) {
    this.size = size;
    this.bytes = Buffer.allocUnsafe(size * BODY_BYTES);
    this.signatures = new Array<string>(size);
    for (let index = 0; index < size; index += 1) {
      const body = benchBody(index);
      body.copy(this.bytes, index * BODY_BYTES);
      this.signatures[index] = sign(BENCH_SECRET, body);
    }
  }

  /** Body and signature header value of delivery `index`. */
  delivery(index: number, distinct: boolean): { body: Buffer; signature: string } {
    if (index >= this.size && distinct) {
      this.signedOnTheFly += 1;
      const body = benchBody(index);
      return { body, signature: sign(BENCH_SECRET, body) };
    }
    const slot = index % this.size;
    return { body: this.bytes.subarray(slot * BODY_BYTES, (slot + 1) * BODY_BYTES), signature: this.signatures[slot]! };
  }
}
