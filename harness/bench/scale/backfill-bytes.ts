import pino from 'pino';
import { createServiceLocator } from '../../../src/arcgis/service-locator.js';
import { startBackfill } from '../../../src/backfill/backfill-worker.js';
import { checkGenerations } from '../../../src/backfill/generation-check.js';
import { buildEmulator } from '../../../src/emulator/build-emulator.js';
import { EventQueue } from '../../../src/queue/event-queue.js';
import { connectRedis, createProducerConnection } from '../../../src/redis/connection.js';
import { startRedis } from '../redis.js';

/** What {@link measureBackfillBytes} found. */
export interface BackfillBytes {
  /** `bytes / edits`. */
  backfillBytesPerEdit: number;
  edits: number;
  /** Bytes of the `extractChanges` answers the backfill read: the operation's, its job status's and its result's. */
  bytes: number;
}

const SERVICE = 'Hosted/Parcels.FeatureServer';
/** The URLs of `extractChanges` and of its asynchronous job (status, result). */
const EXTRACT_URL = /\/FeatureServer\/(extractChanges|jobs\/)/;

/**
 * The emulator's point-feature service (`Hosted/Parcels`) and geohook's backfill worker on a private Redis:
 * `edits` point edits made while nothing receives them, found as a gap by a generation check, filled by the
 * worker; counts the bytes of every `extractChanges` answer it read (through the `fetch` it is given).
 */
export async function measureBackfillBytes(options: { edits: number }): Promise<BackfillBytes> {
  const redis = await startRedis('fast');
  const emulator = await buildEmulator({ logLevel: 'warn' });
  const connection = createProducerConnection(redis.url);
  const workerConnection = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
  const eventQueue = new EventQueue({ connection, prefix: 'geohook' });
  let bytes = 0;
  const counting: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (!EXTRACT_URL.test(new URL(response.url).pathname)) return response;
    const body = await response.arrayBuffer();
    bytes += body.byteLength;
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  try {
    await emulator.listen({ host: '127.0.0.1', port: 0 });
    const root = `http://127.0.0.1:${(emulator.server.address() as { port: number }).port}`;
    const adminUrl = `${root}/arcgis/admin`;
    const auth = { username: 'admin', password: 'admin.pass', tokenUrl: `${adminUrl}/generateToken` };
    await eventQueue.ready();
    await checkGenerations(SERVICE, { eventQueue, hook: 'default', adminUrl, auth });
    for (let n = 0; n < options.edits; n += 1) {
      const response = await fetch(`${root}/emulator/services/${SERVICE}/edits`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ changeType: 'FeaturesCreated', lose: true }),
      });
      if (response.status !== 200) throw new Error(`backfill-bytes: an edit answered HTTP ${response.status}`);
      await response.body?.cancel();
    }
    const filled = new Promise<void>((resolve, reject) => {
      const worker = startBackfill({
        connection: workerConnection,
        prefix: 'geohook',
        eventQueue,
        auth,
        serviceLocator: createServiceLocator({ adminUrl }),
        logger: pino({ level: 'silent' }),
        fetch: counting,
        onFilled: () => void worker.close().then(resolve, reject),
      });
      worker.on('failed', (_job, err) => void worker.close().finally(() => reject(err)));
    });
    await checkGenerations(SERVICE, { eventQueue, hook: 'default', adminUrl, auth });
    await filled;
    return { backfillBytesPerEdit: bytes / options.edits, edits: options.edits, bytes };
  } finally {
    await eventQueue.close();
    connection.disconnect();
    workerConnection.disconnect();
    await emulator.close();
    await redis.stop();
  }
}
