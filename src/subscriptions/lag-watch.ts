import type { Logger } from 'pino';
import type { AlertSender } from '../health/alert-sender.js';
import type { SubscriptionStatus } from './subscription-status.js';

/** The share of a backlog cap at which a subscription is said to lag. */
export const LAGGING_SHARE = 0.8;

/** Options of {@link startLagWatch}. */
export interface LagWatchOptions {
  read: () => Promise<readonly SubscriptionStatus[]>;
  /** ALERT_URL's sender (debounced per subscription through Redis, so several receivers send one alert). */
  alert?: AlertSender;
  logger: Logger;
  /** Time between two looks. @defaultValue 15000 */
  intervalMs?: number;
}

/** Why a subscription lags: its backlog or its oldest event's wait past {@link LAGGING_SHARE} of its cap. */
export function laggingReason(status: SubscriptionStatus): string | undefined {
  const { waiting, lagSeconds, backlog } = status;
  if (waiting >= LAGGING_SHARE * backlog.count) return `${waiting} events waiting (the cap is ${backlog.count})`;
  if (lagSeconds >= LAGGING_SHARE * backlog.ageSeconds)
    return `its oldest event has waited ${Math.round(lagSeconds)} s (the cap is ${backlog.ageSeconds} s)`;
  return undefined;
}

/**
 * Looks at the subscriptions every `intervalMs` and warns (a log line and a `subscription.lagging` alert) about each
 * one that nears its backlog cap, before it drops anything: its workers are down or too slow.
 */
export function startLagWatch(options: LagWatchOptions): { close(): void } {
  const log = options.logger.child({ component: 'subscriptions' });
  const warned = new Set<string>();
  const look = async (): Promise<void> => {
    for (const status of await options.read()) {
      const reason = laggingReason(status);
      if (reason === undefined) {
        warned.delete(status.name);
        continue;
      }
      if (!warned.has(status.name)) log.warn({ subscription: status.name, reason }, 'subscription lagging: its readers are behind');
      warned.add(status.name);
      void options.alert?.({
        event: 'subscription.lagging',
        service: `subscription ${status.name}`,
        subscription: status.name,
        waiting: status.waiting,
        lagSeconds: status.lagSeconds,
        dropped: status.dropped,
        text: `geohook: subscription ${status.name} is lagging: ${reason}; past the cap its oldest events are dropped`,
      });
    }
  };
  const timer = setInterval(
    () => void look().catch((err: unknown) => log.debug({ err }, 'subscriptions not read')),
    options.intervalMs ?? 15_000,
  );
  timer.unref();
  return { close: () => clearInterval(timer) };
}
