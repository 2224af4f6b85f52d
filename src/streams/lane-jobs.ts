import { readFileSync } from 'node:fs';
import type { Job, JobJson, JobsOptions, Queue } from 'bullmq';
import type { Result } from 'ioredis';
import { bullmq } from '../commonjs/bullmq.js';
import type { RoutedEvent } from '../fanout/routed-event.js';
import type { RedisClient } from '../redis/connection.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `numberOfKeys` first: 5 (lane-take.lua). */
    geohookLaneTake(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Result<(string | string[])[], Context>;
    /** `numberOfKeys` first: 7 (lane-complete.lua). */
    geohookLaneComplete(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Result<number[], Context>;
  }
}

const takeLua = readFileSync(new URL('./lane-take.lua', import.meta.url), 'utf8');
const completeLua = readFileSync(new URL('./lane-complete.lua', import.meta.url), 'utf8');

/** The completed jobs a job's `removeOnComplete` keeps, as BullMQ reads it: a count (-1: all) and an age (seconds, '': any). */
function keptOf(removeOnComplete: JobsOptions['removeOnComplete']): [number, number | ''] {
  if (typeof removeOnComplete === 'object') return [removeOnComplete.count ?? -1, 'age' in removeOnComplete ? removeOnComplete.age : ''];
  if (typeof removeOnComplete === 'number') return [removeOnComplete, ''];
  return [removeOnComplete === true ? 0 : -1, ''];
}

/**
 * The jobs of a stream route's queue that its lane publishes: replays of dead letters, and the jobs an earlier version
 * handed it (docs/streams.md#the-lane-and-the-event-log). Taken and completed many per Redis call (lane-take.lua,
 * lane-complete.lua beside this module) as BullMQ's own scripts take and complete them one at a time, so the
 * dashboard, `geohook relay status`, QueueEvents and the completed jobs kept read them as any worker's. Completions
 * are grouped: one call at a time, carrying every job published while the previous one ran.
 */
export class LaneJobs {
  readonly #connection: RedisClient;
  readonly #queue: Queue<RoutedEvent>;
  readonly #token: string;
  readonly #lockMs: number;
  #waiting: { job: Job<RoutedEvent>; resolve: (done: boolean) => void; reject: (err: unknown) => void }[] = [];
  #completing = false;

  constructor(connection: RedisClient, queue: Queue<RoutedEvent>, token: string, lockMs: number) {
    if (typeof connection.geohookLaneTake !== 'function') {
      connection.defineCommand('geohookLaneTake', { lua: takeLua });
      connection.defineCommand('geohookLaneComplete', { lua: completeLua });
    }
    this.#connection = connection;
    this.#queue = queue;
    this.#token = token;
    this.#lockMs = lockMs;
  }

  /** Takes up to `max` waiting jobs, locked with the lane's token, in the queue's order; none while it is paused. */
  async take(max: number): Promise<Job<RoutedEvent>[]> {
    const queue = this.#queue;
    const keys = ['wait', 'active', 'events', 'meta', 'marker'].map((name) => queue.toKey(name));
    const taken = await this.#connection.geohookLaneTake(keys.length, ...keys, queue.toKey(''), Date.now(), this.#token, this.#lockMs, max);
    const jobs: Job<RoutedEvent>[] = [];
    for (let at = 0; at < taken.length; at += 2) {
      const id = taken[at] as string;
      const [json] = bullmq.raw2NextJobData([taken[at + 1], id, 0, 0]) as [JobJson];
      const job = bullmq.Job.fromJSON<RoutedEvent>(queue, json, id);
      job.token = this.#token;
      jobs.push(job);
    }
    return jobs;
  }

  /** Completes a job the lane took: true once completed, false when it was no longer the lane's (it went back to wait). */
  complete(job: Job<RoutedEvent>): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ job, resolve, reject });
      if (!this.#completing) void this.#completeWaiting();
    });
  }

  async #completeWaiting(): Promise<void> {
    this.#completing = true;
    while (this.#waiting.length > 0) {
      const batch = this.#waiting;
      this.#waiting = [];
      const queue = this.#queue;
      const keys = ['wait', 'active', 'events', 'meta', 'completed', 'stalled', 'prioritized'].map((name) => queue.toKey(name));
      const args: (string | number)[] = [queue.toKey(''), Date.now(), this.#token];
      for (const { job } of batch) args.push(job.id!, ...keptOf(job.opts.removeOnComplete));
      try {
        const done = await this.#connection.geohookLaneComplete(keys.length, ...keys, ...args);
        batch.forEach(({ resolve }, at) => resolve(done[at] === 1));
      } catch (err) {
        for (const { reject } of batch) reject(err);
      }
    }
    this.#completing = false;
  }
}
