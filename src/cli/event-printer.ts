import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { compilePattern } from '../consumers/event-patterns.js';
import { subscribe, type Subscription } from '../consumers/subscribe.js';
import type { EventHandlers } from '../consumers/types.js';
import type { GeohookEvent } from '../queue/envelope.js';
import { printJson } from './print.js';

/** Options of {@link startEventPrinter}. */
export interface EventPrinterOptions {
  redisUrl: string;
  prefix: string;
  /** Event-type patterns to print. @defaultValue ['*'] */
  patterns?: readonly string[];
  /** Events printed at the same time per queue; 1 keeps each queue's order. @defaultValue 1 */
  concurrency?: number;
  metrics?: Registry;
  logger?: Logger;
}

/**
 * A consumer that prints each event matching one of `patterns` as one JSON line on stdout, once even when
 * several patterns match it.
 */
export function startEventPrinter(options: EventPrinterOptions): Subscription {
  const patterns = [...new Set(options.patterns ?? ['*'])];
  const compiled = patterns.map(compilePattern);
  // The first pattern that matches an event prints it; the others let it pass.
  const printer = (index: number) => (event: GeohookEvent) => {
    const first = compiled.findIndex((pattern) => event.types.some((type) => pattern.matches(type)));
    if (first === index) printJson(event);
  };
  const handlers = Object.fromEntries(patterns.map((pattern, index) => [pattern, printer(index)])) as EventHandlers;
  return subscribe({
    connection: options.redisUrl,
    prefix: options.prefix,
    handlers,
    concurrency: options.concurrency ?? 1,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
}
