import type { Queue } from 'bullmq';
import { openQueue } from '../queue/open-queue.js';
import type { RedisClient } from '../redis/connection.js';
import { changeEventsQueueName } from './change-event.js';

/** The queue of ranges of server generations to resolve into change events (docs/changes.md). */
export const changesQueueName = 'change-ranges';

/** The two queues of change events, opened for inspection (counts, the dashboard's board); closing them leaves the connection open. */
export interface ChangeQueues {
  ranges: Queue;
  events: Queue;
  close(): Promise<void>;
}

/** Opens the change queues on `connection` (BullMQ keys under `prefix`). */
export function openChangeQueues(connection: RedisClient, prefix: string): ChangeQueues {
  const ranges = openQueue(changesQueueName, { connection, prefix, skipWaitingForReady: true });
  const events = openQueue(changeEventsQueueName, { connection, prefix, skipWaitingForReady: true });
  return {
    ranges,
    events,
    close: async () => {
      await Promise.all([ranges.close(), events.close()]);
    },
  };
}
