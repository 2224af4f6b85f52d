import type { Queue, QueueOptions } from 'bullmq';
import { bullmq } from '../commonjs/bullmq.js';

/**
 * A BullMQ `Queue` for `name`. Its connection's errors are left to whoever owns the connection (the server says a
 * lost Redis once, through pino): a `Queue` without an `error` listener prints the stack of every failed reconnect on
 * stderr, a flood of text among the JSON logs during an outage. Commands still reject their own promises.
 */
export function openQueue<Data = unknown>(name: string, options: QueueOptions): Queue<Data> {
  const queue = new bullmq.Queue<Data>(name, options);
  queue.on('error', () => undefined);
  return queue;
}
