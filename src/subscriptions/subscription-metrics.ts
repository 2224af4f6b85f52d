import { Gauge, type Registry } from 'prom-client';
import type { SubscriptionStatus } from './subscription-status.js';

/**
 * The subscriptions' gauges on the receiver's registry, read from Redis at each scrape (a scrape that cannot read
 * them leaves them out): `geohook_subscription_backlog` (events waiting), `_lag_seconds` (the oldest unhandled event's wait, in the queue or the log),
 * `_dropped_total` (events dropped past the backlog cap, a count kept in Redis).
 */
export function registerSubscriptionMetrics(registry: Registry, read: () => Promise<readonly SubscriptionStatus[]>): void {
  let reading: Promise<readonly SubscriptionStatus[]> | undefined;
  // One read per scrape for the three gauges.
  const current = (): Promise<readonly SubscriptionStatus[]> => {
    reading ??= read()
      .catch(() => [])
      .finally(() => setTimeout(() => (reading = undefined), 0).unref());
    return reading;
  };
  const gauge = (name: string, help: string, value: (status: SubscriptionStatus) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['subscription'],
      registers: [registry],
      async collect() {
        this.reset();
        for (const status of await current()) this.set({ subscription: status.name }, value(status));
      },
    });
  };
  gauge('geohook_subscription_backlog', 'Events waiting in a subscription for its workers', (status) => status.waiting);
  gauge(
    'geohook_subscription_lag_seconds',
    'How long the oldest event a subscription has not had handled has waited, in its queue or in the event log',
    (status) => status.lagSeconds,
  );
  gauge('geohook_subscription_dropped_total', 'Events a subscription dropped past its backlog cap', (status) => status.dropped);
}
