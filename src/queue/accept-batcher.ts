import type { Redis } from 'ioredis';
import { acceptEvents, type AcceptRequest } from './accept-script.js';

interface Waiting {
  request: AcceptRequest;
  resolve: (accepted: boolean) => void;
  reject: (err: unknown) => void;
}

/** Options of {@link AcceptBatcher}. */
export interface AcceptBatcherOptions {
  connection: Redis;
  /** How long a hook remembers an event id, ms. */
  dedupMs: number;
  /** How long an event id stays claimed by the first hook that got it, ms. */
  claimMs: number;
  /** Most events per script call. @defaultValue 256 */
  maxBatch?: number;
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

  constructor(options: AcceptBatcherOptions) {
    this.options = { maxBatch: 256, ...options };
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
    const { connection, dedupMs, claimMs } = this.options;
    acceptEvents(connection, batch.map((waiting) => waiting.request), { dedupMs, claimMs }).then(
      (answers) => batch.forEach((waiting, index) => waiting.resolve(answers[index] === true)),
      (err: unknown) => batch.forEach((waiting) => waiting.reject(err)),
    );
  };
}
