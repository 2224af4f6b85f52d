import { Counter, Histogram, type Registry } from 'prom-client';

/** How one event ended for a subscription, as counted in `geohook_events_consumed_total`. */
export type ConsumeOutcome = 'completed' | 'retried' | 'failed' | 'poison' | 'ignored';

/** The metrics of a subscription. */
export interface ConsumerMetrics {
  consumed: Counter<'queue' | 'type' | 'outcome'>;
  handlerSeconds: Histogram<'handler' | 'outcome'>;
}

/** A metric of `registry` by name, created on first use: several subscriptions may share a registry. */
function shared<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

/** Creates (or finds) the consumer metrics on `registry`. */
export function createConsumerMetrics(registry: Registry): ConsumerMetrics {
  return {
    consumed: shared(
      registry,
      'geohook_events_consumed_total',
      () =>
        new Counter({
          name: 'geohook_events_consumed_total',
          help: 'Events taken by consumers, by queue, event type and outcome (completed, retried, failed, poison, ignored)',
          labelNames: ['queue', 'type', 'outcome'],
          registers: [registry],
        }),
    ),
    handlerSeconds: shared(
      registry,
      'geohook_handler_duration_seconds',
      () =>
        new Histogram({
          name: 'geohook_handler_duration_seconds',
          help: 'Time a handler took per event, by handler pattern and outcome',
          labelNames: ['handler', 'outcome'],
          buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
          registers: [registry],
        }),
    ),
  };
}
