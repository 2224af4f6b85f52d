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

  /** The plan of the server in hand; rejects when the configured durability cannot be kept there. */
  plan(): Promise<DurabilityPlan> | undefined {
    return this.current;
  }

  /** True once the plan of the server in hand is known (kept or refused). */
  settled(): boolean {
    return this.known;
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
