import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job, type JobsOptions, type Queue } from 'bullmq';
import type { ChainableCommander } from 'ioredis';
import type { BaseLogger } from 'pino';
import { duplicateConnection, type RedisClient } from '../redis/connection.js';

/** Options of {@link InboxMover}. */
export interface InboxMoverOptions {
  /** The producer connection the BullMQ queues use; the mover writes jobs through it and does not close it. */
  connection: RedisClient;
  /** Key of the inbox stream. */
  inbox: string;
  /** The queue an entry names, or `undefined` for a name this version does not know. */
  queueOf: (name: string) => Queue | undefined;
  /** Options of every job (attempts, backoff, removal); the job id comes from the entry. */
  jobOptions: JobsOptions;
  /**
   * Entries turned into jobs per transaction while deliveries keep the process busy (each batch holds the
   * event loop for its jobs' making, so acknowledgements wait that long). @defaultValue 50
   */
  batchSize?: number;
  /**
   * Entries per transaction while the process is otherwise idle (the inbox drains after a burst): fewer
   * round trips and transactions per event. @defaultValue 200
   */
  drainBatchSize?: number;
  /** An entry read by a mover that has not moved it for this long (it died) is taken over. @defaultValue 10000 */
  reclaimAfterMs?: number;
  /** Longest wait of one blocking read of the inbox. @defaultValue 1000 */
  blockMs?: number;
  /**
   * Pause between two batches while the rest of the process keeps the event loop busier than
   * {@link BUSY_SHARE} (a burst of deliveries): acknowledgements go first, the inbox absorbs the burst
   * and is moved at full speed once it passes. @defaultValue 25
   */
  yieldMs?: number;
  log?: Pick<BaseLogger, 'warn' | 'error'>;
}

/** The consumer group every mover of a prefix reads the inbox in: each entry goes to one of them. */
const GROUP = 'movers';
/** Pause after a failed read or move (Redis down) before the next try. */
const RETRY_DELAY_MS = 500;
/** Share of the event loop's time, the mover's own work aside, above which the mover yields. */
export const BUSY_SHARE = 0.5;

type StreamEntry = [id: string, fields: string[] | null];

interface InboxEntry {
  id: string;
  /** `undefined` for an entry deleted while it was pending: nothing is left to move. */
  fields: Record<string, string> | undefined;
}

/**
 * A job whose data is the inbox entry's JSON text, stored as it is: the envelope was serialised once, when
 * it was accepted, and is not parsed and serialised again on its way into BullMQ.
 */
class InboxJob extends Job {
  private readonly json: string;

  constructor(queue: Queue, name: string, json: string, options: JobsOptions, id: string) {
    super(queue, name, undefined, options, id);
    this.json = json;
  }

  override asJSON(): ReturnType<Job['asJSON']> {
    return { ...super.asJSON(), data: this.json };
  }
}

function entryOf([id, fields]: StreamEntry): InboxEntry {
  if (fields === null) return { id, fields: undefined };
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) record[fields[i]!] = fields[i + 1]!;
  return { id, fields: record };
}

/**
 * Turns the inbox stream into BullMQ jobs. Every receiver runs one; they share the stream through one
 * consumer group, so each entry is moved by one of them. A batch's jobs are added and its entries
 * acknowledged and deleted in one MULTI transaction: the hand-over happens once or not at all. Entries a
 * mover read and never moved (it was killed) are taken over by any mover after `reclaimAfterMs`.
 */
export class InboxMover {
  private readonly options: Required<Omit<InboxMoverOptions, 'log'>> & Pick<InboxMoverOptions, 'log'>;
  private readonly reader: RedisClient;
  private readonly consumer = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private readonly stopped = new AbortController();
  private groupReady = false;
  /** Set when a move may have failed: entries this mover read are read again before new ones. */
  private ownPending = false;
  private nextReclaimAt = 0;
  private running: Promise<void> | undefined;
  /** The batch being moved, if any. */
  private moving: Promise<void> | undefined;
  /** Event loop use when the last batch ended, and the mover's own busy time since. */
  private loopUse: EventLoopUtilization = performance.eventLoopUtilization();
  private ownBusyMs = 0;
  /** Entries read at a time: `batchSize` while the process is busy, `drainBatchSize` while it is not. */
  private readSize: number;

  constructor(options: InboxMoverOptions) {
    this.options = { batchSize: 50, drainBatchSize: 200, reclaimAfterMs: 10_000, blockMs: 1000, yieldMs: 25, ...options };
    this.readSize = this.options.batchSize;
    // Blocking reads hold their connection; the jobs go through the queues' own connection. Reads wait
    // for Redis (while it is down, and before the first connect) instead of failing fast.
    this.reader = duplicateConnection(options.connection, {
      connectionName: 'geohook-inbox-mover',
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
    });
    this.reader.on('error', () => undefined); // reported through the failed reads
  }

  /** Starts moving; a second call does nothing. */
  start(): void {
    this.running ??= this.run();
  }

  /**
   * Stops after the batch in hand (its transaction completes or fails as a whole) and closes the reader.
   * A read waiting for Redis is abandoned: ioredis may never settle a command queued while it was down.
   */
  async close(): Promise<void> {
    this.stopped.abort();
    this.reader.disconnect();
    await this.moving?.catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (!this.stopped.signal.aborted) {
      try {
        if (!this.groupReady) await this.createGroup();
        const entries = await this.next();
        if (entries.length > 0 && !this.stopped.signal.aborted) {
          this.moving = this.move(entries);
          await this.moving.finally(() => (this.moving = undefined));
          await this.yieldWhileBusy();
        }
      } catch (err) {
        if (this.stopped.signal.aborted) break;
        this.ownPending = true;
        if (String((err as Error).message).includes('NOGROUP')) this.groupReady = false;
        this.options.log?.warn({ err }, 'inbox mover: Redis refused a read or a move; retrying');
        await sleep(RETRY_DELAY_MS, undefined, { signal: this.stopped.signal }).catch(() => undefined);
      }
    }
  }

  /**
   * When, since the last batch, the rest of the process kept the loop busy: sleeps `yieldMs` and reads
   * small batches next; otherwise reads large ones.
   */
  private async yieldWhileBusy(): Promise<void> {
    const since = performance.eventLoopUtilization(this.loopUse);
    this.loopUse = performance.eventLoopUtilization();
    const othersShare = (since.active - this.ownBusyMs) / Math.max(since.active + since.idle, 1);
    this.ownBusyMs = 0;
    const busy = othersShare > BUSY_SHARE;
    this.readSize = busy ? this.options.batchSize : this.options.drainBatchSize;
    if (busy) await sleep(this.options.yieldMs, undefined, { signal: this.stopped.signal }).catch(() => undefined);
  }

  private async createGroup(): Promise<void> {
    try {
      await this.reader.xgroup('CREATE', this.options.inbox, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
    this.groupReady = true;
  }

  /** This mover's unfinished entries first, then entries of dead movers, then new ones (blocking). */
  private async next(): Promise<InboxEntry[]> {
    const { inbox, blockMs, reclaimAfterMs } = this.options;
    const batchSize = this.readSize;
    if (this.ownPending) {
      const own = await this.read('0');
      if (own.length > 0) return own;
      this.ownPending = false;
    }
    if (Date.now() >= this.nextReclaimAt) {
      const [, claimed] = (await this.reader.xautoclaim(inbox, GROUP, this.consumer, reclaimAfterMs, '0-0', 'COUNT', batchSize)) as [
        string,
        StreamEntry[],
      ];
      // A full batch means there may be more: take them over before anything new.
      this.nextReclaimAt = claimed.length < batchSize ? Date.now() + reclaimAfterMs / 2 : 0;
      if (claimed.length > 0) return claimed.map(entryOf);
    }
    return this.read('>', blockMs);
  }

  private async read(from: '0' | '>', blockMs?: number): Promise<InboxEntry[]> {
    const { inbox } = this.options;
    const block = blockMs === undefined ? [] : ['BLOCK', blockMs];
    const reply = (await this.reader.xreadgroup(
      'GROUP',
      GROUP,
      this.consumer,
      'COUNT',
      this.readSize,
      ...(block as []),
      'STREAMS',
      inbox,
      from,
    )) as [string, StreamEntry[]][] | null;
    return (reply?.[0]?.[1] ?? []).map(entryOf);
  }

  /** Adds the entries' jobs, acknowledges and deletes the entries: one transaction. */
  private async move(entries: InboxEntry[]): Promise<void> {
    const { connection, inbox, jobOptions, queueOf, log } = this.options;
    const started = performance.now();
    const done: string[] = [];
    const moved: InboxEntry[] = [];
    const firstQueue = entries.map((entry) => queueOf(entry.fields?.queue ?? '')).find((queue) => queue !== undefined);
    // BullMQ's scripts are defined on its wrapper of the connection: its transaction can run them. It is
    // an ioredis transaction underneath, which BullMQ types as its own interface.
    const multi = (firstQueue === undefined ? connection.multi() : (await firstQueue.getBackend().client).multi()) as ChainableCommander;
    for (const entry of entries) {
      const fields = entry.fields;
      if (fields === undefined) {
        done.push(entry.id);
        continue;
      }
      const queue = queueOf(fields.queue ?? '');
      if (queue === undefined || fields.id === undefined || fields.name === undefined || fields.data === undefined) {
        // Written by another geohook version (a rolling upgrade): left for a mover that knows it.
        log?.warn({ entry: entry.id, queue: fields.queue }, 'inbox entry for an unknown queue left in the inbox');
        continue;
      }
      const job = new InboxJob(queue, fields.name, fields.data, { ...jobOptions, jobId: fields.id }, fields.id);
      // Queues the job's script on the transaction at once (its reply comes with the transaction's), or
      // rejects before queuing anything when BullMQ refuses the options: that entry stays in the inbox.
      const queued = multi.length;
      job.addJob(multi as never).catch((err: unknown) => log?.error({ err, entry: entry.id }, 'inbox entry refused by BullMQ'));
      if (multi.length === queued) continue;
      moved.push(entry);
      done.push(entry.id);
    }
    if (done.length === 0) return;
    multi.xack(inbox, GROUP, ...done);
    multi.xdel(inbox, ...done);
    const sent = multi.exec();
    this.ownBusyMs += performance.now() - started;
    const results = await sent;
    if (results === null) throw new Error('the inbox transaction was discarded');
    // A job whose script failed inside the executed transaction: its entry is gone, so it is written back,
    // under a job id of its own (the failed script may have left a job hash under the first one).
    let failures = 0;
    for (const [index, entry] of moved.entries()) {
      const err = results[index]?.[0];
      if (err === null || err === undefined) continue;
      failures += 1;
      log?.error({ err, entry: entry.id }, 'inbox entry not added as a job: written back to the inbox');
      const fields = { ...entry.fields!, id: `${entry.fields!.id!.split('~')[0]}~${randomUUID().slice(0, 8)}` };
      await connection.xadd(inbox, '*', ...Object.entries(fields).flat());
    }
    // The next try waits like any other failure, rather than spinning on a queue that refuses jobs.
    if (failures > 0) throw new Error(`${failures} of ${moved.length} jobs not added`);
  }
}
