import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, type JobsOptions } from 'bullmq';
import type { BaseLogger } from 'pino';
import { defaultCompletedJobs, DEFAULT_DEDUP_RETENTION_SECONDS, defaultRetryPolicy } from '../config/defaults.js';
import type { RetryPolicy } from '../config/types.js';
import { QueueUnavailableError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { AcceptBatcher } from './accept-batcher.js';
import { defineAcceptCommand } from './accept-script.js';
import { DurabilityWatch } from './durability-watch.js';
import type { Durability } from './durability.js';
import type { GeohookEvent } from './envelope.js';
import { InboxMover } from './inbox-mover.js';
import { allQueueNames, queueNames, type QueueName } from './names.js';
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
  /** Longest wait for Redis to store an event before giving up. @defaultValue 2000 */
  enqueueTimeoutMs?: number;
  /** Completed jobs kept for inspection and replay. @defaultValue `{ ageSeconds: 86400, count: 10000 }` */
  completedJobs?: { ageSeconds: number; count: number };
  /** How consumers retry a failed event. @defaultValue 5 attempts, exponential backoff from 1 s with 20 % jitter */
  retry?: RetryPolicy;
  /** `Retry-After` advertised when Redis is unavailable. @defaultValue 5 */
  retryAfterSeconds?: number;
  /**
   * Run an {@link InboxMover} in this process, turning accepted events into jobs. Every process that
   * accepts events should: any mover moves any receiver's events. @defaultValue true
   */
  moveInbox?: boolean;
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
  /** Where the durability in force and the mover's Redis errors are reported. */
  log?: Pick<BaseLogger, 'info' | 'warn' | 'error'>;
}

/** How long an event id stays claimed by the first hook that got it: longer than any stay in the inbox. */
const CLAIM_MS = 3_600_000;

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
 * Puts events on the three BullMQ queues (docs/events.md): job name = event type, job id = event id.
 * An event is acknowledged once one script has stored it in the inbox stream (`<prefix>:inbox`); an
 * {@link InboxMover} makes it a BullMQ job moments later, in batches. Repeats of an event on the same
 * hook within the retention window are stored once: the hook's dedup key outlives the job. When the id
 * is already taken by the same bytes on another hook (or by a job kept past the window), the job id
 * becomes `<event id>-<hook>-<time>` so that no accepted event is dropped.
 */
export class EventQueue {
  private readonly connection: RedisClient;
  private readonly prefix: string;
  private readonly defaultJobOptions: JobsOptions;
  private queues: ReadonlyMap<QueueName, Queue> | undefined;
  private readonly dedupRetentionMs: number;
  private readonly enqueueTimeoutMs: number;
  private readonly retryAfterSeconds: number;
  private readonly inbox: string;
  private readonly moveInbox: boolean;
  private readonly log: Pick<BaseLogger, 'info' | 'warn' | 'error'> | undefined;
  private readonly batcher: AcceptBatcher;
  private readonly durability: Durability;
  private readonly durabilityWatch: DurabilityWatch;
  private readonly spool: SpoolDrain | undefined;
  private mover: InboxMover | undefined;

  constructor(options: EventQueueOptions) {
    this.connection = options.connection;
    this.dedupRetentionMs = (options.dedupRetentionSeconds ?? DEFAULT_DEDUP_RETENTION_SECONDS) * 1000;
    this.enqueueTimeoutMs = options.enqueueTimeoutMs ?? 2000;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 5;
    this.prefix = options.prefix ?? 'geohook';
    this.inbox = `${this.prefix}:inbox`;
    this.moveInbox = options.moveInbox ?? true;
    this.log = options.log;
    this.durability = options.durability ?? 'fast';
    const retry = options.retry ?? defaultRetryPolicy;
    this.defaultJobOptions = {
      attempts: retry.attempts,
      backoff: { type: retry.backoff.type, delay: retry.backoff.delayMs, jitter: retry.backoff.jitter },
      removeOnComplete: {
        age: options.completedJobs?.ageSeconds ?? defaultCompletedJobs.ageSeconds,
        count: options.completedJobs?.count ?? defaultCompletedJobs.count,
      },
      removeOnFail: false,
    };
    defineAcceptCommand(this.connection);
    this.batcher = new AcceptBatcher({
      connection: this.connection,
      dedupMs: this.dedupRetentionMs,
      claimMs: Math.min(CLAIM_MS, this.dedupRetentionMs),
      waitAofTimeoutMs: this.enqueueTimeoutMs,
    });
    this.durabilityWatch = new DurabilityWatch({
      connection: this.connection,
      durability: this.durability,
      onPlan: (plan) => (this.batcher.waitAof = plan.waitAof),
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    if (options.spoolDir !== undefined) {
      this.spool = new SpoolDrain({
        spool: new EventSpool({ dir: options.spoolDir, ...(options.log === undefined ? {} : { log: options.log }) }),
        store: (event) => this.withTimeout(this.durableStore(event)),
        canStore: () => this.connection.status === 'ready' && this.queues !== undefined,
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
    const queues = new Map(
      allQueueNames.map((name) => [name, new Queue(name, { connection, prefix, skipWaitingForReady: true, defaultJobOptions })]),
    );
    this.queues = queues;
    this.spool?.start();
    if (!this.moveInbox) return;
    this.mover = new InboxMover({
      connection,
      inbox: this.inbox,
      queueOf: (name) => queues.get(name as QueueName),
      jobOptions: defaultJobOptions,
      ...(this.log === undefined ? {} : { log: this.log }),
    });
    this.mover.start();
  };

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
      throw new QueueUnavailableError(`Redis is ${this.connection.status}`, this.retryAfterSeconds, { cause: err });
    }
  }

  /** The BullMQ queue of a family, for inspection (depth, jobs). Throws before Redis was first reached. */
  queue(name: QueueName): Queue {
    if (this.queues === undefined) throw new QueueUnavailableError(`Redis is ${this.connection.status}`, this.retryAfterSeconds);
    return this.queues.get(name)!;
  }

  /**
   * Stores `event` durably in Redis, or throws {@link QueueUnavailableError} when Redis does not answer
   * within the enqueue timeout. Resolves only after Redis stored the event in the inbox (or recognised a
   * repeat); its job follows as soon as a mover takes it.
   */
  async enqueue(event: GeohookEvent): Promise<EnqueueResult> {
    // Behind spooled events, a new one waits its turn in the spool too: they reach Redis in order.
    if (this.spool?.pending === true) return this.spoolEvent(event);
    try {
      if (this.connection.status !== 'ready' || this.queues === undefined) {
        throw new QueueUnavailableError(`Redis is ${this.connection.status}`, this.retryAfterSeconds);
      }
      return await this.withTimeout(this.durableStore(event));
    } catch (err) {
      if (this.spool === undefined || !(err instanceof QueueUnavailableError)) throw err;
      // Redis may still store the event after the timeout: the drain then finds it a repeat.
      return this.spoolEvent(event);
    }
  }

  private async spoolEvent(event: GeohookEvent): Promise<EnqueueResult> {
    await this.spool!.append(event);
    return { duplicate: false, spooled: true };
  }

  /** Strict durability waits for the server's settings to be known, and refuses a server that cannot keep it. */
  private async durableStore(event: GeohookEvent): Promise<EnqueueResult> {
    if (this.durability === 'strict') {
      await this.durabilityWatch.plan()?.catch((err: unknown) => {
        throw new QueueUnavailableError((err as Error).message, this.retryAfterSeconds, { cause: err });
      });
    }
    return this.store(event);
  }

  private async store(event: GeohookEvent): Promise<EnqueueResult> {
    const queue = this.queue(queueNames[event.family]);
    const accepted = await this.batcher.accept({
      keys: {
        dedup: queue.toKey(`de:${event.hook}:${event.id}`),
        job: queue.toKey(event.id),
        claim: queue.toKey(`claim:${event.id}`),
        inbox: this.inbox,
      },
      entry: {
        queue: queue.name,
        name: event.type,
        eventId: event.id,
        fallbackJobId: `${event.id}-${event.hook}-${Date.now().toString(36)}`,
        data: JSON.stringify(event),
      },
    });
    return { duplicate: !accepted, spooled: false };
  }

  /** Entries of the inbox: events acknowledged and not yet jobs. */
  inboxLength(): Promise<number> {
    return this.connection.xlen(this.inbox);
  }

  /**
   * Resolves once the inbox is empty (every event accepted so far, by any receiver, is a job), or false
   * after `timeoutMs`. Rejects when Redis cannot be asked.
   */
  async drained(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while ((await this.inboxLength()) > 0) {
      if (Date.now() >= deadline) return false;
      await sleep(10);
    }
    return true;
  }

  private async withTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new QueueUnavailableError(`Redis did not answer within ${this.enqueueTimeoutMs} ms`, this.retryAfterSeconds)),
        this.enqueueTimeoutMs,
      );
      timer.unref();
    });
    try {
      return await Promise.race([work, timeout]);
    } catch (err) {
      if (err instanceof QueueUnavailableError) throw err;
      throw new QueueUnavailableError(`Redis refused the event: ${(err as Error).message}`, this.retryAfterSeconds, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Moves what is left in the inbox (for up to `drainTimeoutMs`, while Redis answers), then stops the
   * mover and closes the BullMQ queues (not the shared connection).
   */
  async close(drainTimeoutMs = 5000): Promise<void> {
    this.connection.off('ready', this.createQueues);
    this.durabilityWatch.close();
    if (this.spool !== undefined) {
      this.connection.off('ready', this.spool.start);
      await this.spool.close();
    }
    if (this.mover !== undefined && this.connection.status === 'ready') await this.drained(drainTimeoutMs).catch(() => false);
    await this.mover?.close();
    await Promise.all([...(this.queues?.values() ?? [])].map((queue) => queue.close()));
  }
}
