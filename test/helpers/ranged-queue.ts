import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Test } from 'tap';
import { createServiceLocator } from '../../src/arcgis/service-locator.js';
import { buildEvent } from '../../src/events/build-event.js';
import { EventQueue, type EventQueueOptions } from '../../src/queue/event-queue.js';
import { backfillQueueName } from '../../src/queue/names.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import { dedupKey, gapsKey, watermarksKey } from '../../src/redis/keys.js';
import { uniquePrefix } from './receiver.js';

export const SERVICE_URL = 'https://gis.example.com/server/rest/services/Hosted/Parcels/FeatureServer';
export const PARCELS = 'default Hosted/Parcels.FeatureServer';

/** An ArcGIS Enterprise feature delivery of the generations `(from, to]`; `when` makes other bytes for the same range. */
export const enterprise = (from: number, to: number, when = to, serviceUrl = SERVICE_URL) => ({
  serviceType: 'FeatureServer',
  changesUrl: `${serviceUrl}/extractChanges?serverGens=%5B${from},${to}%5D`,
  name: 'geohook',
  id: 'w1',
  folderName: 'Hosted',
  serviceName: 'Parcels',
  events: [{ eventType: 'FeaturesCreated', when }],
});

/** Trusts gis.example.com. */
export const serviceLocator = createServiceLocator({ trusted: ['https://gis.example.com'] });

/** A JSON delivery of `payload` to `hook`, signed unless `verified` is false. */
export const delivery = (payload: unknown, hook = 'default', verified = true) =>
  buildEvent(
    { raw: Buffer.from(JSON.stringify(payload)), hook, contentType: 'application/json', verified, classified: payload },
    serviceLocator,
  );

/**
 * An event queue on a fresh prefix whose Parcels service is at generation `serverGen` on the hooks `default` and
 * `other`, with the readers of what it keeps: watermarks, feature jobs, the gap jobs no worker took, the gaps
 * listed, and the dedup keys.
 */
export async function rangedQueue(t: Test, redisUrl: string, raw: Redis, serverGen = 1000, options: Partial<EventQueueOptions> = {}) {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redisUrl);
  const eventQueue = new EventQueue({ connection, prefix, ...options });
  await eventQueue.ready();
  for (const hook of ['default', 'other'])
    await eventQueue.confirm(hook, [
      { scope: `${hook} Hosted/Parcels.FeatureServer`, from: serverGen, to: serverGen, serviceUrl: SERVICE_URL },
    ]);
  const gaps = new Queue(backfillQueueName, { connection, prefix });
  t.teardown(async () => {
    await gaps.close();
    await eventQueue.close();
    connection.disconnect();
  });
  return {
    prefix,
    eventQueue,
    gaps,
    watermarks: () => raw.hgetall(watermarksKey(prefix)),
    featureJobs: async () => (await eventQueue.queue('feature-events').getJobs()).length,
    /** The gap jobs no worker took yet, `[from, to]` by `from`. */
    gapRanges: async () =>
      (await gaps.getJobs(['waiting', 'delayed']))
        .filter((job) => job.name === 'gap')
        .map((job) => [job.data.from as string, job.data.to as string])
        .sort(([a], [b]) => Number(a) - Number(b)),
    listedGaps: () => raw.hgetall(gapsKey(prefix)),
    dedupKeys: () => raw.keys(`${dedupKey(prefix, '')}*`),
  };
}
