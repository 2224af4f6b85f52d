import { performance } from 'node:perf_hooks';
import { EventQueue } from '../../src/queue/event-queue.js';
import { allQueueNames } from '../../src/queue/names.js';
import { buildEvent } from '../../src/receiver/build-event.js';
import { createProducerConnection } from '../../src/redis/connection.js';
import { benchBody } from './payloads.js';
import { countJobs, startRedis, type Durability } from './redis.js';

export interface InboxDrainResult {
  /** Events accepted into the inbox before the mover started. */
  events: number;
  /** Jobs in the queues once the inbox was empty. */
  jobs: number;
  /** Seconds from the mover's start until the inbox was empty. */
  seconds: number;
  movedPerSec: number;
  /** False when the inbox was not empty within the time allowed. */
  drained: boolean;
}

const PREFIX = 'bench-drain';

/**
 * The inbox mover alone, as after a burst: `events` envelopes are accepted with no mover running, then
 * one EventQueue's mover, the only work of its process, turns them into BullMQ jobs.
 */
export async function runInboxDrain(settings: { events: number; durability: Durability; timeoutMs: number }): Promise<InboxDrainResult> {
  const redis = await startRedis(settings.durability);
  const connection = createProducerConnection(redis.url);
  try {
    const acceptor = new EventQueue({ connection, prefix: PREFIX, moveInbox: false });
    await acceptor.ready();
    for (let first = 0; first < settings.events; first += 500) {
      const chunk = Array.from({ length: Math.min(500, settings.events - first) }, (_, offset) => {
        const raw = benchBody(first + offset);
        const payload = JSON.parse(raw.toString('utf8')) as unknown;
        return acceptor.enqueue(
          buildEvent({ raw, hook: 'default', contentType: 'application/json', verified: true, payload, isForm: false }),
        );
      });
      await Promise.all(chunk);
    }
    await acceptor.close(0);

    const startedAt = performance.now();
    const mover = new EventQueue({ connection, prefix: PREFIX });
    const drained = await mover.drained(settings.timeoutMs);
    const seconds = (performance.now() - startedAt) / 1000;
    await mover.close(0);
    const { total } = await countJobs(redis.url, PREFIX, allQueueNames);
    return { events: settings.events, jobs: total, seconds, movedPerSec: settings.events / seconds, drained };
  } finally {
    connection.disconnect();
    await redis.stop();
  }
}
