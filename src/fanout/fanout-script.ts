import { readFileSync } from 'node:fs';
import type { Queue } from 'bullmq';
import type { Result } from 'ioredis';
import { withBullmqJobs } from '../queue/bullmq-jobs.js';
import { encodedJobOptions } from '../queue/job-script.js';
import { openQueue } from '../queue/open-queue.js';
import type { RedisClient } from '../redis/connection.js';
import { fanoutKey, subscriptionDroppedKey } from '../redis/keys.js';
import type { Destination } from './destination.js';
import type { LogEntry } from './event-log.js';
import type { RoutedHead } from './routed-event.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `numberOfKeys` first: 2, the fan-out's state and the dropped counts. */
    geohookFanout(numberOfKeys: number, ...keysAndArgs: (string | number | Buffer)[]): Result<number, Context>;
  }
}

const fanoutLua = withBullmqJobs(readFileSync(new URL('./fanout.lua', import.meta.url), 'utf8'));

/** The outcome of a hand-over: done, the cursor moved under it (another receiver did it), or the subscriptions changed. */
export type HandOver = 'done' | 'moved' | 'changed';

const outcomes: Record<number, HandOver> = { 1: 'done', 0: 'moved', [-1]: 'changed' };

/** A run of the log to hand over, and the state field it moves. */
export interface HandOverRequest {
  /** `cursor`, or `catchup:<name>`. */
  field: string;
  expected: string;
  next: string;
  version: string;
  /** A catch-up: the cursor at which it joins the others. */
  joinAt?: string;
  entries: readonly LogEntry<RoutedHead>[];
  /** Per destination, the indexes (from 0) of the entries it takes. */
  taken: ReadonlyMap<Destination, readonly number[]>;
}

/**
 * The fan-out script (`fanout.lua`, beside this module) bound to the destinations' queues: their key prefixes and
 * BullMQ's encoding of their job options, made once per destination.
 */
export class FanoutScript {
  readonly #connection: RedisClient;
  readonly #prefix: string;
  readonly #queues = new Map<string, { queue: Queue; options: Buffer }>();
  /** The same by destination: the key above is made once per destination, not once per hand-over. */
  readonly #byDestination = new WeakMap<Destination, { queue: Queue; options: Buffer }>();

  constructor(connection: RedisClient, prefix: string) {
    if (typeof connection.geohookFanout !== 'function') connection.defineCommand('geohookFanout', { lua: fanoutLua });
    this.#connection = connection;
    this.#prefix = prefix;
  }

  #queueOf(destination: Destination): { queue: Queue; options: Buffer } {
    const known = this.#byDestination.get(destination);
    if (known !== undefined) return known;
    const key = `${destination.queue}\n${JSON.stringify(destination.jobOptions)}`;
    let found = this.#queues.get(key);
    if (found === undefined) {
      const queue = openQueue(destination.queue, {
        connection: this.#connection,
        prefix: this.#prefix,
        defaultJobOptions: destination.jobOptions,
        skipWaitingForReady: true,
      });
      found = { queue, options: encodedJobOptions(queue) };
      this.#queues.set(key, found);
    }
    this.#byDestination.set(destination, found);
    return found;
  }

  async handOver(request: HandOverRequest): Promise<HandOver> {
    const args: (string | number | Buffer)[] = [
      request.field,
      request.expected,
      request.next,
      request.version,
      Date.now(),
      request.joinAt ?? '',
      request.entries.length,
    ];
    for (const { jobId, name, data } of request.entries) args.push(jobId, name, data);
    for (const [destination, indexes] of request.taken) {
      if (indexes.length === 0 && destination.backlog === undefined) continue;
      const { queue, options } = this.#queueOf(destination);
      const backlog = destination.backlog;
      args.push(queue.toKey(''), options, backlog?.count ?? 0, backlog?.ageMs ?? 0, destination.name, indexes.map((i) => i + 1).join(' '));
    }
    const keys = [fanoutKey(this.#prefix), subscriptionDroppedKey(this.#prefix)];
    return outcomes[await this.#connection.geohookFanout(keys.length, ...keys, ...args)]!;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map(({ queue }) => queue.close()));
    this.#queues.clear();
  }
}
