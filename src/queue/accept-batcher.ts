import type { RedisClient } from '../redis/connection.js';
import { acceptEvents, type AcceptRequest } from './accept-script.js';

interface Waiting {
  request: AcceptRequest;
  resolve: (accepted: boolean) => void;
  reject: (err: unknown) => void;
}

/** Options of {@link AcceptBatcher}. */
export interface AcceptBatcherOptions {
  connection: RedisClient;
  /** How long a hook remembers an event id, ms. */
  dedupMs: number;
  /** How long an event id stays claimed by the first hook that got it, ms. */
  claimMs: number;
  /** Most events per script call. @defaultValue 256 */
  maxBatch?: number;
  /** Longest wait of `WAITAOF` for the local fsync, ms. @defaultValue 2000 */
  waitAofTimeoutMs?: number;
}

/**
 * Group commit of acknowledgements: the events accepted during one turn of the event loop (every request
 * whose body arrived in the same poll) are written by one script call when the turn ends. Under load that
 * replaces a socket write, a command and a reply per delivery by one per batch; a lone delivery waits
 * for nothing but the end of its own turn. Each caller learns its own answer; a failed call fails its
 * whole batch (the senders retry).
 */
export class AcceptBatcher {
  private readonly options: Required<AcceptBatcherOptions>;
  private waiting: Waiting[] = [];
  /**
   * Follow each script call with `WAITAOF 1 0` (same connection, so one round trip) and answer only once
   * the local AOF has the batch on disk: strict durability on Redis 7.2 and later.
   */
  waitAof = false;

  constructor(options: AcceptBatcherOptions) {
    this.options = { maxBatch: 256, waitAofTimeoutMs: 2000, ...options };
  }

  /** Resolves true for a new event, false for a repeat within the dedup window, once Redis stored it. */
  accept(request: AcceptRequest): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(this.flush);
      this.waiting.push({ request, resolve, reject });
      if (this.waiting.length >= this.options.maxBatch) this.flush();
    });
  }

  private readonly flush = (): void => {
    const batch = this.waiting;
    if (batch.length === 0) return;
    this.waiting = [];
    const { connection, dedupMs, claimMs, waitAofTimeoutMs } = this.options;
    const written = acceptEvents(
      connection,
      batch.map((waiting) => waiting.request),
      { dedupMs, claimMs },
    );
    const synced = this.waitAof ? (connection.call('WAITAOF', 1, 0, waitAofTimeoutMs) as Promise<[number, number]>) : undefined;
    Promise.all([written, synced])
      .then(([answers, aof]) => {
        if (aof !== undefined && aof[0] < 1) throw new Error(`WAITAOF: the write was not fsynced within ${waitAofTimeoutMs} ms`);
        batch.forEach((waiting, index) => waiting.resolve(answers[index] === true));
      })
      .catch((err: unknown) => batch.forEach((waiting) => waiting.reject(err)));
  };
}
