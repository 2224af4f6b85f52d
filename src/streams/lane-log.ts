import { readFileSync } from 'node:fs';
import type { JobsOptions, Queue } from 'bullmq';
import type { Result } from 'ioredis';
import { fieldIndex, parseLogEntries, parseLogHeads, type LogEntry } from '../fanout/event-log.js';
import type { RoutedHead } from '../fanout/routed-event.js';
import type { RedisClient } from '../redis/connection.js';
import { eventLogKey, streamLaneGroup } from '../redis/keys.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `numberOfKeys` first: 5 (lane-dead-letter.lua). */
    geohookLaneDeadLetter(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Result<number, Context>;
    /**
     * `XREADGROUP` answering bytes: ioredis makes a `…Buffer` form of every command, which its 5.x types do not declare
     * for this one (`callBuffer` would lose the command's name under auto-pipelining).
     */
    xreadgroupBuffer(...args: (string | number)[]): Result<unknown, Context>;
  }
}

const deadLetterLua = readFileSync(new URL('./lane-dead-letter.lua', import.meta.url), 'utf8');

/** The one consumer of a lane's group: whichever receiver holds the lease reads as it, so what one read is another's to read again. */
const CONSUMER = 'lane';
/** Longest a finished entry waits for its acknowledgement, ms. */
const ACK_LINGER_MS = 5;
/** Finished entries acknowledged at once, without waiting. */
const ACK_BATCH = 128;
/** `XREADGROUP`'s error before the fan-out made the group. */
const NO_GROUP = /^NOGROUP/;

/** Entries read through the group: the events, and the ids of those that are none (to finish at once). */
export interface LaneRead {
  entries: LogEntry<RoutedHead>[];
  /** Read and not events (never written by geohook, or trimmed before they were finished). */
  unreadable: string[];
  /** The id of the last entry read. */
  lastId: string | undefined;
}

/**
 * A stream lane's side of the event log (docs/streams.md#order): the route's consumer group, read by one consumer
 * whichever receiver holds the lane, so the entries read and not finished (its pending entries) are read again by the
 * next holder, in the log's order. Finishing an entry acknowledges it in the group (many per call, one call at a
 * time); a dead letter becomes a failed job of the route's queue, where `geohook relay replay` finds it.
 */
export class LaneLog {
  readonly #connection: RedisClient;
  readonly #reader: RedisClient;
  readonly #key: string;
  readonly #group: string;
  readonly #parse: typeof parseLogHeads;
  /** Entries finished and not acknowledged yet. */
  #acks: string[] = [];
  /** The acknowledgement under way. */
  #acking: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param connection - commands that do not block.
   * @param reader - a connection of the lane's own for the reads that wait for new entries; the caller closes it.
   * @param heads - change events are parsed up to their rows (a route that reads none: no row filter, no transform); else whole.
   */
  constructor(connection: RedisClient, reader: RedisClient, prefix: string, route: string, { heads = false }: { heads?: boolean } = {}) {
    if (typeof connection.geohookLaneDeadLetter !== 'function') connection.defineCommand('geohookLaneDeadLetter', { lua: deadLetterLua });
    this.#connection = connection;
    this.#reader = reader;
    this.#key = eventLogKey(prefix);
    this.#group = streamLaneGroup(route);
    this.#parse = heads ? parseLogHeads : parseLogEntries;
  }

  /** Up to `count` entries no holder read yet, waiting up to `blockMs` for the first; undefined while the group is not made yet. */
  async readNew(count: number, blockMs: number): Promise<LaneRead | undefined> {
    return this.#read(() =>
      this.#reader.xreadgroupBuffer('GROUP', this.#group, CONSUMER, 'COUNT', count, 'BLOCK', blockMs, 'STREAMS', this.#key, '>'),
    );
  }

  /** Up to `count` entries read before and not finished, after `after` (`0` for the first), in the log's order. */
  async readHeld(after: string, count: number): Promise<LaneRead | undefined> {
    return this.#read(() => this.#connection.xreadgroupBuffer('GROUP', this.#group, CONSUMER, 'COUNT', count, 'STREAMS', this.#key, after));
  }

  /** A read's entries, read as bytes: each event's data decoded once, to parse it, and kept as read for its body. */
  async #read(read: () => Promise<unknown>): Promise<LaneRead | undefined> {
    let reply: [Buffer, [Buffer, Buffer[] | null][]][] | null;
    try {
      reply = (await read()) as typeof reply;
    } catch (err) {
      if (err instanceof Error && NO_GROUP.test(err.message)) return undefined;
      throw err;
    }
    const raw = reply?.[0]?.[1] ?? [];
    const unreadable: string[] = [];
    const present: [string, string[]][] = [];
    const bytes = new Map<string, Buffer>();
    for (const [rawId, fields] of raw) {
      const id = rawId.toString();
      if (fields === null) {
        unreadable.push(id);
        continue;
      }
      const decoded = fields.map((field) => field.toString());
      present.push([id, decoded]);
      const data = fields[fieldIndex(decoded, 'd')];
      if (data !== undefined) bytes.set(id, data);
    }
    const entries = this.#parse(present, (id) => unreadable.push(id));
    for (const entry of entries) {
      const data = bytes.get(entry.id);
      if (data !== undefined) entry.bytes = data;
    }
    return { entries, unreadable, lastId: raw.at(-1)?.[0].toString() };
  }

  /**
   * Finishes an entry: acknowledged in the group within {@link ACK_LINGER_MS}, with the others finished meanwhile (an
   * acknowledgement is a Redis call: one per entry would cost the lane more than its publishes). One that Redis does
   * not take leaves the entry read, for the next holder to publish again (a copy the broker drops).
   */
  finish(id: string): void {
    this.#acks.push(id);
    if (this.#acks.length >= ACK_BATCH) this.#flushSoon(0);
    else this.#flushSoon(ACK_LINGER_MS);
  }

  #flushSoon(ms: number): void {
    if (this.#acking !== undefined) return;
    if (ms === 0 || this.#timer === undefined) {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => void this.flush(), ms);
    }
  }

  /** Acknowledges what was finished and not acknowledged yet (closing: before the lease is given up). */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#acking;
    // Another flush took them meanwhile: done once its call is.
    if (this.#acks.length === 0) return this.#acking;
    const ids = this.#acks;
    this.#acks = [];
    this.#acking = this.#connection
      .xack(this.#key, this.#group, ...ids)
      .then(() => undefined)
      .catch(() => undefined)
      .finally(() => {
        this.#acking = undefined;
        if (this.#acks.length > 0) this.#flushSoon(this.#acks.length >= ACK_BATCH ? 0 : ACK_LINGER_MS);
      });
    await this.#acking;
  }

  /**
   * Finishes an entry as a dead letter: a failed job of `queue` (the event's id, type and data, `reason` its
   * `failedReason`), as BullMQ leaves a job that failed its last try, in the call that acknowledges the entry. When
   * the queue holds a job of that id already (a replay of it under way), only the acknowledgement.
   */
  async deadLetter(entry: LogEntry<RoutedHead>, queue: Queue, jobOptions: JobsOptions, reason: string): Promise<void> {
    const keys = [this.#key, queue.toKey(entry.jobId), queue.toKey('failed'), queue.toKey('events'), queue.toKey('meta')];
    const opts = JSON.stringify({ ...jobOptions, jobId: entry.jobId });
    await this.#connection.geohookLaneDeadLetter(
      keys.length,
      ...keys,
      this.#group,
      entry.id,
      entry.jobId,
      entry.name,
      entry.data,
      opts,
      Date.now(),
      reason,
    );
  }
}
