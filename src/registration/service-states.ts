import type { ServiceName } from '../arcgis/service-name.js';
import type { RedisClient } from '../redis/connection.js';
import type { FailingService } from '../redis/failing-services.js';
import { registrationFailingKey } from '../redis/keys.js';

/** Where self-registration stands: what `/readyz` shows beside its status. */
export interface RegistrationSummary {
  /** Services the last pass worked on (patterns resolved), the missing named ones included. */
  services: number;
  /** Of them, those whose webhook is in place. */
  registered: number;
  /** The services not registered, with their reason; the first {@link SUMMARY_LIMIT}. */
  failing: Pick<FailingService, 'service' | 'reason'>[];
  /** How many services are failing in all. */
  failingCount: number;
  /** Patterns of REGISTER that matched no service. */
  unmatched: string[];
  /** How long the last full pass took, seconds; undefined before the first ends. */
  lastPassSeconds?: number;
}

/** Failing services listed by {@link ServiceStates.summary}; the count says how many more there are. */
export const SUMMARY_LIMIT = 100;

/** Options of {@link ServiceStates}. */
export interface ServiceStatesOptions {
  redis: RedisClient;
  prefix: string;
  hook: string;
  /** The wait after the `n`th failure in a row (from 0). */
  backoffMs: (failures: number) => number;
}

/**
 * The book of each service's registration: which are registered, which failed (kept in Redis too, under
 * `<prefix>:registration:<hook>:failing`, so that doctor and the services page of any replica read them), and when
 * each failed one, or one whose health check failed, is tried again on its own.
 */
export class ServiceStates {
  private readonly options: ServiceStatesOptions;
  private readonly failing = new Map<ServiceName, FailingService>();
  /** Registered services whose health check failed: tried again on their own, without counting as unregistered. */
  private readonly recheck = new Map<ServiceName, { failures: number; retryAt: number }>();
  private readonly registered = new Set<ServiceName>();
  private known: readonly ServiceName[] = [];
  private unmatched: string[] = [];

  constructor(options: ServiceStatesOptions) {
    this.options = options;
  }

  private get key(): string {
    return registrationFailingKey(this.options.prefix, this.options.hook);
  }

  /**
   * The services a full pass works on (patterns resolved): those no longer named are forgotten, here and in
   * Redis.
   */
  async plan(services: readonly ServiceName[], unmatched: string[]): Promise<void> {
    this.known = services;
    this.unmatched = unmatched;
    const named = new Set(services);
    const gone = [...this.failing.keys()].filter((service) => !named.has(service));
    for (const service of [...this.registered]) if (!named.has(service)) this.registered.delete(service);
    for (const service of [...this.recheck.keys()]) if (!named.has(service)) this.recheck.delete(service);
    for (const service of gone) this.failing.delete(service);
    const stored = await this.options.redis.hkeys(this.key);
    const stale = stored.filter((service) => !named.has(service));
    if (stale.length > 0) await this.options.redis.hdel(this.key, ...stale);
  }

  /** The service's webhook is in place; `healthy`: its health check passed too. */
  async succeeded(service: ServiceName, healthy: boolean): Promise<void> {
    this.registered.add(service);
    if (this.failing.delete(service)) await this.options.redis.hdel(this.key, service);
    if (healthy) this.recheck.delete(service);
    else {
      const failures = (this.recheck.get(service)?.failures ?? 0) + 1;
      this.recheck.set(service, { failures, retryAt: Date.now() + this.options.backoffMs(failures - 1) });
    }
  }

  /** The service could not be registered: kept with its reason, and tried again after its backoff. */
  async failed(service: ServiceName, reason: string): Promise<FailingService> {
    const now = Date.now();
    const before = this.failing.get(service);
    const failures = (before?.failures ?? 0) + 1;
    const state = { service, reason, since: before?.since ?? now, failures, retryAt: now + this.options.backoffMs(failures - 1) };
    this.registered.delete(service);
    this.recheck.delete(service);
    this.failing.set(service, state);
    await this.options.redis.hset(this.key, service, JSON.stringify(state));
    return state;
  }

  /** The services to try again on their own at `now`: failed ones, and registered ones whose health check failed. */
  due(now: number): ServiceName[] {
    const due = [...this.failing.values()].filter((state) => state.retryAt <= now).map((state) => state.service);
    for (const [service, state] of this.recheck) if (state.retryAt <= now) due.push(service);
    return due;
  }

  /** The earliest retry, epoch ms; undefined when nothing waits for one. */
  nextRetryAt(): number | undefined {
    const times = [...this.failing.values(), ...this.recheck.values()].map((state) => state.retryAt);
    return times.length === 0 ? undefined : Math.min(...times);
  }

  /** Why `service` is failing; undefined when it is not. */
  reasonOf(service: ServiceName): string | undefined {
    return this.failing.get(service)?.reason;
  }

  /** Where registration stands. */
  summary(): RegistrationSummary {
    const failing = [...this.failing.values()];
    return {
      services: this.known.length,
      registered: this.registered.size,
      failing: failing.slice(0, SUMMARY_LIMIT).map(({ service, reason }) => ({ service, reason })),
      failingCount: failing.length,
      unmatched: this.unmatched,
    };
  }
}
