import { once } from 'node:events';
import type { JobsOptions, Queue } from 'bullmq';
import type { BaseLogger } from 'pino';
import { defaultCompletedJobs, DEFAULT_DEDUP_RETENTION_SECONDS, DEFAULT_PREFIX, defaultRetryPolicy } from '../config/defaults.js';
import type { RetryPolicy } from '../config/retry-policy.js';
import { QueueUnavailableError } from '../errors.js';
import type { AcceptedEvent } from '../events/build-event.js';
import type { ServiceActivity } from '../events/service-activity.js';
import type { TrackedRange } from '../events/tracked-ranges.js';
import { unavailableReason } from '../redis/connection-state.js';
import type { RedisClient } from '../redis/connection.js';
import { DurabilityWatch } from './durability-watch.js';
import type { Durability } from './durability.js';
import { JobScript, scriptKeys, type EventWrite, type JobRequest } from './job-script.js';
import { JobWriter } from './job-writer.js';
import { longJobOptions } from './long-jobs.js';
import { LoopLoad, type ProcessTime } from './loop-load.js';
import { allQueueNames, backfillQueueName, queueNames, type QueueName } from './names.js';
import { openQueue } from './open-queue.js';
import { SpoolDrain } from './spool-drain.js';
import { EventSpool } from './spool.js';

/** Options of {@link EventQueue}. */
export interface EventQueueOptions {
  /** A producer connection (see `createProducerConnection`); the EventQueue does not close it. */
  connection: RedisClient;
  /** BullMQ key prefix. @defaultValue 'geohook' */
  prefix?: string;
  /** How long an event id is remembered per hook. @defaultValue 86400 */
  dedupRetentionSeconds?: number;
  /**
   * How long a gap a delivery revealed waits before the backfill may fill it, ms: a delivery that was only late
   * (deliveries of a busy service overtake each other) fills it meanwhile, at no cost to the server.
   * @defaultValue 1000
   */
  gapDelayMs?: number;
  /** Longest wait for Redis to store an event before giving up. @defaultValue 2000 */
  enqueueTimeoutMs?: number;
  /** Completed jobs kept for inspection and replay. @defaultValue `{ ageSeconds: 86400, count: 10000 }` */
  completedJobs?: { ageSeconds: number; count: number };
  /** How consumers retry a failed event. @defaultValue 5 attempts, exponential backoff from 1 s with 20 % jitter */
  retry?: RetryPolicy;
  /** `Retry-After` advertised when Redis is unavailable. @defaultValue 5 */
  retryAfterSeconds?: number;
  /**
   * `strict` acknowledges only once the event is on disk (WAITAOF, or a server with appendfsync always)
   * and refuses deliveries (503) on a server that can do neither. @defaultValue 'fast'
   */
  durability?: Durability;
  /**
   * A directory for a local fsync'd spool: while Redis cannot take events they are appended there and
   * acknowledged, then moved into Redis in order when it is back. Unset: such deliveries get 503.
   */
  spoolDir?: string;
  /** Where the durability in force and the spool's progress are reported. */
  log?: Pick<BaseLogger, 'info' | 'warn' | 'error'>;
  /** The process's time, read to tell whether it runs at its capacity (tests). @defaultValue its event loop's and CPU time */
  processTime?: () => ProcessTime;
}

/** The options of every event job: the retry policy, the completed jobs kept, failed jobs kept as dead letters. */
export function eventJobOptions(options: Pick<EventQueueOptions, 'retry' | 'completedJobs'>): JobsOptions {
  const retry = options.retry ?? defaultRetryPolicy;
  return {
    attempts: retry.attempts,
    backoff: { type: retry.backoff.type, delay: retry.backoff.delayMs, jitter: retry.backoff.jitter },
    removeOnComplete: {
      age: options.completedJobs?.ageSeconds ?? defaultCompletedJobs.ageSeconds,
      count: options.completedJobs?.count ?? defaultCompletedJobs.count,
    },
    removeOnFail: false,
  };
}

/** What {@link EventQueue.confirm} did. */
export interface ConfirmResult {
  /** Ranges still waiting ahead of their server. */
  ahead: number;
  /** The ranges refused, `[from, to]`: their server never reached them. */
  refused: [number, number][];
}

/** What happened to an event handed to {@link EventQueue.enqueue}. */
export interface EnqueueResult {
  /**
   * True when the same event was already accepted on the same hook within the retention window (a spooled
   * event is not checked yet: false, and the repeat is recognised when the spool is drained).
   */
  duplicate: boolean;
  /** True when the event went to the local spool because Redis could not take it. */
  spooled: boolean;
}

/**
 * Puts events on the three BullMQ queues (docs/events.md): job name = event type, job id = event id, job
 * data = the stored event. An event is acknowledged once a script call (events are written in batches, see
 * {@link JobWriter}) has made it a BullMQ job, or recognised it as a repeat: the same event on the same
 * hook within the retention window is stored once (its dedup key outlives the job; a verified feature event whose
 * ranges of server generations show a repeat needs none, see docs/backfill.md). When the id is
 * already a job (the same bytes on another hook, or a job kept past the window), the job id becomes
 * `<event id>-<hook>-<time>` so that no accepted event is dropped.
 */
export class EventQueue {
  private readonly connection: RedisClient;
  private readonly prefix: string;
  private readonly defaultJobOptions: JobsOptions;
  private queues: ReadonlyMap<QueueName, Queue> | undefined;
  private backfill: Queue | undefined;
  private writer: JobWriter | undefined;
  private readonly loopLoad: LoopLoad;
  private script: JobScript | undefined;
  private readonly dedupRetentionMs: number;
  private readonly gapDelayMs: number;
  private readonly enqueueTimeoutMs: number;
  private readonly retryAfterSeconds: number;
  private readonly durability: Durability;
  private readonly durabilityWatch: DurabilityWatch;
  private waitAof = false;
  private readonly spool: SpoolDrain | undefined;

  constructor(options: EventQueueOptions) {
    this.connection = options.connection;
    this.dedupRetentionMs = (options.dedupRetentionSeconds ?? DEFAULT_DEDUP_RETENTION_SECONDS) * 1000;
    this.gapDelayMs = options.gapDelayMs ?? DEFAULT_GAP_DELAY_MS;
    this.enqueueTimeoutMs = options.enqueueTimeoutMs ?? 2000;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 5;
    this.prefix = options.prefix ?? DEFAULT_PREFIX;
    this.durability = options.durability ?? 'fast';
    this.defaultJobOptions = eventJobOptions(options);
    this.loopLoad = new LoopLoad(options.processTime === undefined ? {} : { time: options.processTime });
    this.durabilityWatch = new DurabilityWatch({
      connection: this.connection,
      durability: this.durability,
      onPlan: (plan) => (this.waitAof = plan.waitAof),
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    if (options.spoolDir !== undefined) {
      this.spool = new SpoolDrain({
        spool: new EventSpool({ dir: options.spoolDir, ...(options.log === undefined ? {} : { log: options.log }) }),
        store: (accepted, data) => this.durableWrite(this.requestOf(accepted, data)),
        canStore: () => this.connection.status === 'ready' && this.writer !== undefined,
        ...(options.log === undefined ? {} : { log: options.log }),
      });
      // Events left in the spool by an earlier run (or an outage) go to Redis as soon as it answers.
      this.connection.on('ready', this.spool.start);
    }
    // BullMQ queries the server when a Queue is made, which a fail-fast connection refuses while it is
    // still connecting: the queues are made once the connection is first ready.
    if (this.connection.status === 'ready') this.createQueues();
    else this.connection.once('ready', this.createQueues);
  }

  private readonly createQueues = (): void => {
    const { connection, prefix, defaultJobOptions } = this;
    if (this.queues !== undefined) return;
    const queues = allQueueNames.map((name) => openQueue(name, { connection, prefix, skipWaitingForReady: true, defaultJobOptions }));
    this.queues = new Map(allQueueNames.map((name, index) => [name, queues[index]!]));
    this.backfill = openQueue(backfillQueueName, { connection, prefix, skipWaitingForReady: true, defaultJobOptions: longJobOptions });
    this.script = new JobScript(connection, {
      queues,
      backfillQueue: this.backfill,
      ...scriptKeys(prefix),
      dedupMs: this.dedupRetentionMs,
      gapDelayMs: this.gapDelayMs,
    });
    this.writer = new JobWriter({
      connection,
      script: this.script,
      timeoutMs: this.enqueueTimeoutMs,
      retryAfterSeconds: this.retryAfterSeconds,
      waitAof: () => this.waitAof,
      ...(this.durability === 'strict' ? { maxBatch: STRICT_MAX_BATCH } : {}),
    });
    this.spool?.start();
  };

  /**
   * Whether the acknowledgements run at their capacity now: Redis's (the job writer has had more calls in flight
   * than its pipeline's depth most of the last quarter second, `saturation.ts`) or this process's own (its event loop
   * was busy nine tenths of it, `loop-load.ts`). The fan-out yields to them meanwhile (docs/subscriptions.md).
   */
  saturated(): boolean {
    // Both read, so that each measure's window keeps rolling.
    const redisFull = this.writer?.saturation.saturated ?? false;
    return this.loopLoad.busy || redisFull;
  }

  /** The options of every event job (retries, backoff, completed jobs kept): change events take the same. */
  get jobOptions(): JobsOptions {
    return this.defaultJobOptions;
  }

  /** Why events cannot be accepted with the configured durability now, for `/readyz`; `undefined` when they can. */
  durabilityIssue(): string | undefined {
    return this.durabilityWatch.issue();
  }

  /** Resolves once the queues exist (Redis answered at least once); rejects after `timeoutMs`. */
  async ready(timeoutMs = 10_000): Promise<void> {
    if (this.queues !== undefined) return;
    try {
      await once(this.connection, 'ready', { signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      throw this.unavailable(unavailableReason(this.connection), err);
    }
  }

  /** The BullMQ queue of a family, for inspection (depth, jobs). Throws before Redis was first reached. */
  queue(name: QueueName): Queue {
    if (this.queues === undefined) throw this.unavailable(unavailableReason(this.connection));
    return this.queues.get(name)!;
  }

  /** The queue of gaps to backfill (docs/backfill.md), for inspection. Throws before Redis was first reached. */
  backfillQueue(): Queue {
    if (this.backfill === undefined) throw this.unavailable(unavailableReason(this.connection));
    return this.backfill;
  }

  /**
   * Makes an accepted event a job in Redis and moves the watermarks by its ranges (or recognises a repeat), or
   * throws {@link QueueUnavailableError} when Redis does not answer within the enqueue timeout; with a spool,
   * such an event is spooled instead.
   */
  enqueue(accepted: AcceptedEvent): Promise<EnqueueResult> {
    const data = JSON.stringify(accepted.event);
    // Behind spooled events, a new one waits its turn in the spool too: they reach Redis in order.
    if (this.spool?.pending === true) return this.spoolEvent(accepted, data);
    // Promise chains rather than async functions: no extra frame or microtask per delivery.
    const written = this.durableWrite(this.requestOf(accepted, data)).then((created) => (created ? NEW : REPEAT));
    if (this.spool === undefined) return written;
    return written.catch((err: unknown) => {
      if (!(err instanceof QueueUnavailableError)) throw err;
      // Redis may still store the event after the timeout: the drain then finds it a repeat.
      return this.spoolEvent(accepted, data);
    });
  }

  /**
   * Moves watermarks without an event, for generations the server itself reported (docs/backfill.md): each
   * raises its scope's server generation (counting the delivered ranges waiting for it), then a range `(g, g]`
   * sets the scope's first watermark to `g`, or records the gap from its watermark up to `g`; `activity` is
   * recorded with it (a poll). Throws {@link QueueUnavailableError} when Redis is unavailable.
   */
  reserve(hook: string, ranges: readonly TrackedRange[], activity?: ServiceActivity): Promise<void> {
    return this.durableWrite({ operation: 'reserve', hook, ranges, ...(activity === undefined ? {} : { activity }) }).then(() => undefined);
  }

  /**
   * Confirms the delivered ranges waiting ahead of their server (docs/backfill.md#ranges-the-server-confirms):
   * each `(g, g]` of `ranges` is a scope's server generation as just read; the ranges waiting that it covers
   * count, in order. Those still ahead stay, unless first seen before `refuseBefore` (epoch ms): refused.
   */
  async confirm(hook: string, ranges: readonly TrackedRange[], refuseBefore?: number): Promise<ConfirmResult> {
    const script = this.script;
    if (this.connection.status !== 'ready' || script === undefined) throw this.unavailable(unavailableReason(this.connection));
    const [answer] = await script.write([{ operation: 'confirm', hook, ranges, ...(refuseBefore === undefined ? {} : { refuseBefore }) }]);
    const [ahead = '0', ...refused] = String(answer).split('\n');
    return {
      ahead: Number(ahead),
      refused: refused.filter((line) => line !== '').map((line) => line.split('\t').map(Number) as [number, number]),
    };
  }

  /** The write of an accepted event whose stored event's JSON is `data`. */
  private requestOf({ event, ranges, activity }: AcceptedEvent, data: string): EventWrite {
    return {
      queue: allQueueNames.indexOf(queueNames[event.family]),
      eventId: event.id,
      hook: event.hook,
      name: event.type,
      data,
      ranges,
      activity,
    };
  }

  private async spoolEvent(accepted: AcceptedEvent, data: string): Promise<EnqueueResult> {
    await this.spool!.append(accepted, data);
    return SPOOLED;
  }

  /**
   * Resolves true for a new job, false for a repeat. Strict durability waits for the server's settings to
   * be known, and refuses a server that cannot keep it.
   */
  private durableWrite(request: JobRequest): Promise<boolean> {
    const writer = this.writer;
    if (this.connection.status !== 'ready' || writer === undefined)
      return Promise.reject(this.unavailable(unavailableReason(this.connection)));
    if (this.durability === 'strict') return this.durabilityPlan().then(() => writer.write(request));
    return writer.write(request);
  }

  /** Waits for the server's persistence to be known, and throws when strict cannot be kept there. */
  private async durabilityPlan(): Promise<void> {
    try {
      await this.durabilityWatch.planKnown(this.enqueueTimeoutMs);
    } catch (err) {
      throw this.unavailable((err as Error).message, err);
    }
  }

  private unavailable(message: string, cause?: unknown): QueueUnavailableError {
    return new QueueUnavailableError(message, this.retryAfterSeconds, cause === undefined ? undefined : { cause });
  }

  /** Stops the spool's drain and closes the BullMQ queues (not the shared connection). */
  async close(): Promise<void> {
    this.connection.off('ready', this.createQueues);
    this.durabilityWatch.close();
    if (this.spool !== undefined) {
      this.connection.off('ready', this.spool.start);
      await this.spool.close();
    }
    await Promise.all([...(this.queues?.values() ?? []), this.backfill].map((queue) => queue?.close()));
  }
}

/** How long a gap a delivery revealed waits before the backfill may fill it. */
const DEFAULT_GAP_DELAY_MS = 1000;

/**
 * Events per script call under strict durability: each turn of Redis's event loop is an fsync there, so
 * larger calls share it.
 */
const STRICT_MAX_BATCH = 16;

const NEW: EnqueueResult = Object.freeze({ duplicate: false, spooled: false });
const REPEAT: EnqueueResult = Object.freeze({ duplicate: true, spooled: false });
const SPOOLED: EnqueueResult = Object.freeze({ duplicate: false, spooled: true });
