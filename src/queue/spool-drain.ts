import type { BaseLogger } from 'pino';
import type { AcceptedEvent } from '../events/build-event.js';
import type { EventSpool } from './spool.js';

/** Options of {@link SpoolDrain}. */
export interface SpoolDrainOptions {
  spool: EventSpool;
  /** Stores one spooled event (and its stored event's JSON) in Redis; a rejection stops the drain until the next try. */
  store(accepted: AcceptedEvent, data: string): Promise<unknown>;
  /** Whether Redis can take events now; the drain waits for it. */
  canStore(): boolean;
  /** Pause between two tries while Redis refuses the events. @defaultValue 1000 */
  retryMs?: number;
  log?: Pick<BaseLogger, 'info' | 'warn'>;
}

/**
 * Moves a spool's events into Redis, oldest first: one drain at a time, started when asked and, while
 * Redis refuses them, tried again every `retryMs`.
 */
export class SpoolDrain {
  private readonly options: SpoolDrainOptions;
  private readonly retryMs: number;
  private draining: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: SpoolDrainOptions) {
    this.options = options;
    this.retryMs = options.retryMs ?? 1000;
  }

  /** Events are waiting in the spool: new ones must queue behind them. */
  get pending(): boolean {
    return this.options.spool.pending;
  }

  /** Appends an event to the spool (fsync'd before it resolves) and schedules a drain. */
  async append(accepted: AcceptedEvent, data: string): Promise<void> {
    await this.options.spool.append(accepted, data);
    this.schedule();
  }

  /** Drains now, unless a drain is under way, nothing is spooled, or Redis cannot take events. */
  readonly start = (): void => {
    const { spool, store, canStore, log } = this.options;
    if (this.draining !== undefined || !spool.pending || !canStore()) return;
    this.draining = spool
      .drain(store)
      .then(
        (stored) => log?.info({ stored }, 'spool drained into Redis'),
        (err: unknown) => {
          log?.warn({ err }, 'spool not drained yet: Redis refused an event; trying again');
          this.schedule();
        },
      )
      .finally(() => {
        this.draining = undefined;
        // Events spooled while draining.
        if (spool.pending) this.schedule();
      });
  };

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, this.retryMs).unref();
  }

  /** Stops trying, waits for a drain under way and closes the spool. */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.draining;
    await this.options.spool.close();
  }
}
