import { once } from 'node:events';
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { QueueUnavailableError } from '../errors.js';
import type { RetryPolicy } from '../config/types.js';
import type { GeohookEvent } from './envelope.js';
import { allQueueNames, queueNames, type QueueName } from './names.js';

/** Options of {@link EventQueue}. */
export interface EventQueueOptions {
  /** A producer connection (see `createProducerConnection`); the EventQueue does not close it. */
  connection: Redis;
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
}

const defaultRetryPolicy: RetryPolicy = { attempts: 5, backoff: { type: 'exponential', delayMs: 1000, jitter: 0.2 } };

/** What happened to an event handed to {@link EventQueue.enqueue}. */
export interface EnqueueResult {
  /** True when the same event was already accepted on the same hook within the retention window. */
  duplicate: boolean;
}

/**
 * Puts events on the three BullMQ queues of CONTRACT §4: job name = event type, job id = event id.
 * Repeats of an event on the same hook within the retention window are enqueued once: BullMQ's
 * throttle-mode deduplication keeps its key for the whole window, also after the job itself was removed.
 * When the id is already taken by the same bytes on another hook (or by a job kept past the window),
 * the job id becomes `<event id>-<hook>-<time>` so that no accepted event is dropped.
 */
export class EventQueue {
  private readonly connection: Redis;
  private readonly prefix: string;
  private readonly defaultJobOptions: JobsOptions;
  private queues: ReadonlyMap<QueueName, Queue> | undefined;
  private readonly dedupRetentionMs: number;
  private readonly enqueueTimeoutMs: number;
  private readonly retryAfterSeconds: number;

  constructor(options: EventQueueOptions) {
    this.connection = options.connection;
    this.dedupRetentionMs = (options.dedupRetentionSeconds ?? 86_400) * 1000;
    this.enqueueTimeoutMs = options.enqueueTimeoutMs ?? 2000;
    this.retryAfterSeconds = options.retryAfterSeconds ?? 5;
    this.prefix = options.prefix ?? 'geohook';
    const retry = options.retry ?? defaultRetryPolicy;
    this.defaultJobOptions = {
      attempts: retry.attempts,
      backoff: { type: retry.backoff.type, delay: retry.backoff.delayMs, jitter: retry.backoff.jitter },
      removeOnComplete: {
        age: options.completedJobs?.ageSeconds ?? 86_400,
        count: options.completedJobs?.count ?? 10_000,
      },
      removeOnFail: false,
    };
    // BullMQ queries the server when a Queue is made, which a fail-fast connection refuses while it is
    // still connecting: the queues are made once the connection is first ready.
    if (this.connection.status === 'ready') this.createQueues();
    else this.connection.once('ready', this.createQueues);
  }

  private readonly createQueues = (): void => {
    const { connection, prefix, defaultJobOptions } = this;
    this.queues ??= new Map(
      allQueueNames.map((name) => [name, new Queue(name, { connection, prefix, skipWaitingForReady: true, defaultJobOptions })]),
    );
  };

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
   * within the enqueue timeout. Resolves only after Redis accepted the job (or recognised a repeat).
   */
  async enqueue(event: GeohookEvent): Promise<EnqueueResult> {
    if (this.connection.status !== 'ready' || this.queues === undefined) {
      throw new QueueUnavailableError(`Redis is ${this.connection.status}`, this.retryAfterSeconds);
    }
    return this.withTimeout(this.store(event));
  }

  private async store(event: GeohookEvent): Promise<EnqueueResult> {
    const queue = this.queue(queueNames[event.family]);
    const deduplicationId = `${event.hook}:${event.id}`;
    // Has this hook seen the event within the window, and is the job id taken? Both commands go out
    // together (one round trip); an ioredis pipeline() would copy every BullMQ script per call.
    const [seen, taken] = await Promise.all([
      this.connection.exists(queue.toKey(`de:${deduplicationId}`)),
      this.connection.exists(queue.toKey(event.id)),
    ]);
    if (seen === 1) return { duplicate: true };
    // The id is taken by the same bytes on another hook, or by a job kept past the window: BullMQ would
    // silently keep the old job, so this event gets an id of its own.
    const jobId = taken === 1 ? `${event.id}-${event.hook}-${Date.now().toString(36)}` : event.id;
    await queue.add(event.type, event, {
      jobId,
      deduplication: { id: deduplicationId, ttl: this.dedupRetentionMs },
    });
    return { duplicate: false };
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

  /** Closes the BullMQ queues (not the shared connection). */
  async close(): Promise<void> {
    this.connection.off('ready', this.createQueues);
    await Promise.all([...(this.queues?.values() ?? [])].map((queue) => queue.close()));
  }
}
