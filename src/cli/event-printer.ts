import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { changeEventsQueueName, type ChangeEvent } from '../changes/change-event.js';
import { subscribe, type Subscription } from '../consumers/subscribe.js';
import type { EventHandlers } from '../consumers/types.js';
import type { GeohookEvent } from '../events/envelope.js';
import { compilePattern, type ConsumedQueue } from '../fanout/event-patterns.js';
import { queueNames } from '../queue/names.js';
import { connectRedis, type RedisTarget } from '../redis/connection.js';
import { printJson } from './print.js';

/** Options of {@link startEventPrinter}. */
export interface EventPrinterOptions {
  /** The Redis of the queues; the printer opens its connection and closes it with the subscription. */
  redis: RedisTarget;
  prefix: string;
  /** Event-type patterns to print. @defaultValue ['*'] */
  patterns?: readonly string[];
  /** Events printed at the same time per queue; 1 keeps each queue's order. @defaultValue 1 */
  concurrency?: number;
  metrics?: Registry;
  logger?: Logger;
  /** Prints one event. @defaultValue one JSON line on stdout */
  print?: (event: GeohookEvent | ChangeEvent) => void;
  /** Read this subscription instead of the family queues. */
  subscription?: string;
}

/**
 * A consumer that prints each event matching one of `patterns` (as one JSON line on stdout unless `print`
 * says otherwise), once even when several patterns match it: it takes them from the family queues, or from
 * `subscription`'s queue.
 */
export function startEventPrinter(options: EventPrinterOptions): Subscription {
  const patterns = [...new Set(options.patterns ?? ['*'])];
  const compiled = patterns.map(compilePattern);
  const print = options.print ?? printJson;
  // The first pattern that matches an event prints it; the others let it pass.
  const printer = (index: number) => (event: GeohookEvent | ChangeEvent) => {
    const [types, queue]: [readonly string[], ConsumedQueue] =
      'family' in event ? [event.types, queueNames[event.family]] : [[event.type], changeEventsQueueName];
    const first = compiled.findIndex(
      (pattern) => (options.subscription !== undefined || pattern.queues.includes(queue)) && types.some((type) => pattern.matches(type)),
    );
    if (first === index) print(event);
  };
  const handlers = Object.fromEntries(patterns.map((pattern, index) => [pattern, printer(index)])) as unknown as EventHandlers;
  // Worker connections wait for Redis through an outage instead of failing (BullMQ's rule for workers).
  const connection = connectRedis(options.redis, { maxRetriesPerRequest: null });
  const subscription = subscribe({
    connection,
    prefix: options.prefix,
    handlers,
    concurrency: options.concurrency ?? 1,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.subscription === undefined ? {} : { subscription: options.subscription }),
  });
  return {
    queues: subscription.queues,
    metrics: subscription.metrics,
    ready: () => subscription.ready(),
    async close(closeOptions) {
      await subscription.close(closeOptions);
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
