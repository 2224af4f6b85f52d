import type { BaseLogger } from 'pino';
import type { RedisClient } from '../redis/connection.js';
import { planDurability, readPersistence, type Durability, type DurabilityPlan } from './durability.js';

/** Options of {@link DurabilityWatch}. */
export interface DurabilityWatchOptions {
  connection: RedisClient;
  durability: Durability;
  /** Called with each new plan's WAITAOF choice. */
  onPlan(plan: DurabilityPlan): void;
  log?: Pick<BaseLogger, 'info' | 'error'>;
}

/**
 * Keeps the durability plan of the server in hand: read when the connection is ready and again at every
 * reconnection, since a failover or a restart may bring a server with other settings.
 */
export class DurabilityWatch {
  private readonly options: DurabilityWatchOptions;
  private current: Promise<DurabilityPlan> | undefined;
  private problem: string | undefined;
  private known = false;

  constructor(options: DurabilityWatchOptions) {
    this.options = options;
    options.connection.on('ready', this.check);
    if (options.connection.status === 'ready') this.check();
  }

  /**
   * Resolves once the plan of the server in hand is known and kept (read once per connection: only the first
   * deliveries after a connection wait, for at most `timeoutMs`); rejects when the configured durability cannot be
   * kept there, or when the server did not say how it persists in time.
   */
  async planKnown(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = this.known
      ? []
      : [
          new Promise<never>(
            (_resolve, reject) => (timer = setTimeout(() => reject(new Error('Redis did not say how it persists in time')), timeoutMs)),
          ),
        ];
    try {
      await Promise.race([this.current, ...late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Why events cannot be accepted with the configured durability now; `undefined` when they can. */
  issue(): string | undefined {
    return this.problem;
  }

  private readonly check = (): void => {
    const { connection, durability, onPlan, log } = this.options;
    const plan = readPersistence(connection).then((server) => planDurability(durability, server));
    this.current = plan;
    this.known = false;
    plan.then(
      (ready) => {
        if (this.current !== plan) return;
        this.known = true;
        onPlan(ready);
        this.problem = undefined;
        log?.info({ durability: ready.durability, waitAof: ready.waitAof }, ready.description);
      },
      (err: unknown) => {
        if (this.current !== plan) return;
        this.known = true;
        this.problem = (err as Error).message;
        log?.error({ err }, 'durability cannot be kept: deliveries are refused');
      },
    );
  };

  /** Stops watching reconnections. */
  close(): void {
    this.options.connection.off('ready', this.check);
  }
}
