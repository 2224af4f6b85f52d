import { QueueUnavailableError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import type { JobRequest, JobScript } from './job-script.js';
import { Saturation } from './saturation.js';

interface Waiting {
  request: JobRequest;
  resolve: (created: boolean) => void;
  reject: (err: unknown) => void;
}

/** Options of {@link JobWriter}. */
export interface JobWriterOptions {
  connection: RedisClient;
  script: JobScript;
  /** Longest wait for Redis to answer a batch (and for WAITAOF's fsync), ms. */
  timeoutMs: number;
  /** `Retry-After` of the error a batch fails with. */
  retryAfterSeconds: number;
  /**
   * Whether to follow each script call with `WAITAOF 1 0` (same connection, so one round trip) and answer
   * only once the local AOF has the batch on disk: strict durability on Redis 7.2 and later.
   */
  waitAof(): boolean;
  /**
   * Most events per script call: that many waiting are sent even while `depth` calls are in flight. Larger
   * calls save no CPU under load and hold more memory. @defaultValue 8
   */
  maxBatch?: number;
  /**
   * Script calls in flight at once. With two, the next call already waits at Redis while it runs one, so
   * Redis does not sit idle for the answer's round trip to Node and the next call's back. @defaultValue 2
   */
  depth?: number;
  /**
   * Fewest events waiting for a call to go while another is in flight: a call of one or two events costs a
   * round trip (and, under strict durability, an fsync) for little. With none in flight, an event goes at
   * once. @defaultValue 4
   */
  minBatch?: number;
}

/**
 * Group commit of acknowledgements, pipelined: an event is sent at once when no script call is in flight;
 * while one is, the events accepted meanwhile go together in a second call once `minBatch` are waiting, and
 * while `depth` are, in the next call sent as soon as one answers (or once `maxBatch` are waiting). So Redis
 * starts on the first delivery while Node still parses the others, always has the next call queued under
 * load, and the batches grow by themselves to what arrives during one call. Each caller learns its own
 * answer; a batch that fails or outlasts the timeout fails as a whole with a {@link QueueUnavailableError}
 * (the senders retry).
 */
export class JobWriter {
  private readonly options: Required<JobWriterOptions>;
  private waiting: Waiting[] = [];
  private inFlight = 0;
  /**
   * Whether the acknowledgements run at capacity: the share of time this writer has more than `depth` calls in flight,
   * a batch of `maxBatch` having gone while `depth` were: deliveries come faster than the largest batches absorb.
   */
  readonly saturation = new Saturation();

  constructor(options: JobWriterOptions) {
    this.options = { maxBatch: 8, depth: 2, minBatch: 4, ...options };
  }

  /** Resolves true for a new job, false for a repeat (within the dedup window, or a range handed over), once Redis stored it. */
  write(request: JobRequest): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (this.waiting.length >= this.options.maxBatch || this.mayFlush()) this.flush();
    });
  }

  /** Whether the events waiting may go now (fewer than `maxBatch`). */
  private mayFlush(): boolean {
    return this.inFlight === 0 || (this.inFlight < this.options.depth && this.waiting.length >= this.options.minBatch);
  }

  private flush(): void {
    const batch = this.waiting;
    this.waiting = [];
    this.inFlight += 1;
    this.saturation.mark(this.inFlight > this.options.depth);
    const { connection, script, timeoutMs, retryAfterSeconds, waitAof } = this.options;
    let settled = false;
    const fail = (err: QueueUnavailableError): void => {
      if (settled) return;
      settled = true;
      for (const waiting of batch) waiting.reject(err);
    };
    const timer = setTimeout(
      () => fail(new QueueUnavailableError(`Redis did not answer within ${timeoutMs} ms`, retryAfterSeconds)),
      timeoutMs,
    );
    const written = script.write(batch.map((waiting) => waiting.request));
    const synced = waitAof() ? (connection.call('WAITAOF', 1, 0, timeoutMs) as Promise<[number, number]>) : undefined;
    Promise.all([written, synced])
      .then(([answers, aof]) => {
        if (aof !== undefined && aof[0] < 1) throw new Error(`WAITAOF: the write was not fsynced within ${timeoutMs} ms`);
        if (settled) return;
        settled = true;
        batch.forEach((waiting, index) => waiting.resolve(answers[index] === 1));
      })
      .catch((err: unknown) =>
        fail(new QueueUnavailableError(`Redis refused the event: ${(err as Error).message}`, retryAfterSeconds, { cause: err })),
      )
      .finally(() => {
        clearTimeout(timer);
        this.inFlight -= 1;
        this.saturation.mark(this.inFlight > this.options.depth);
        if (this.waiting.length > 0 && this.mayFlush()) this.flush();
      });
  }
}
