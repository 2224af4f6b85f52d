import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { GeohookEvent } from '../queue/envelope.js';
import { allQueueNames } from '../queue/names.js';
import { printJson } from './print.js';

/** A consumer of the three queues that prints each event as one JSON line on stdout. */
export interface EventPrinter {
  close(): Promise<void>;
}

/**
 * Starts a BullMQ Worker on each queue that prints the envelope of every event it takes. (The consumer
 * API of issue #5 will replace these plain Workers.)
 */
export function startEventPrinter(redisUrl: string, prefix: string): EventPrinter {
  // Worker connections wait for Redis instead of failing (BullMQ's rule for workers).
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => undefined);
  const workers = allQueueNames.map(
    (name) =>
      new Worker<GeohookEvent>(
        name,
        async (job) => {
          printJson(job.data);
        },
        { connection, prefix, concurrency: 1 },
      ),
  );
  for (const worker of workers) worker.on('error', () => undefined);
  return {
    async close() {
      await Promise.all(workers.map((worker) => worker.close()));
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
