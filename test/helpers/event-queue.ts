import type { Test } from 'tap';
import type { RedisServer } from '../../src/embedded/redis-server.js';
import { EventQueue, type EventQueueOptions } from '../../src/queue/event-queue.js';
import { createProducerConnection, type RedisClient } from '../../src/redis/connection.js';
import { uniquePrefix } from './receiver.js';

/** An EventQueue on `redis` with a fresh prefix and `options`, ready, closed at teardown. */
export async function startEventQueue(
  t: Test,
  redis: Pick<RedisServer, 'url'>,
  options: Omit<EventQueueOptions, 'connection' | 'prefix'> = {},
): Promise<{ eventQueue: EventQueue; connection: RedisClient; prefix: string }> {
  const prefix = uniquePrefix();
  const connection = createProducerConnection(redis.url);
  const eventQueue = new EventQueue({ ...options, connection, prefix });
  await eventQueue.ready();
  t.teardown(async () => {
    await eventQueue.close();
    connection.disconnect();
  });
  return { eventQueue, connection, prefix };
}
