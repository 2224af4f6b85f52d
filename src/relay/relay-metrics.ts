import { Counter, Histogram, type Registry } from 'prom-client';
import type { DeliveryOutcome } from './deliver.js';

/** What the relay workers report to Prometheus. */
export interface RelayMetrics {
  /** Each try's outcome and duration. */
  onOutcome(route: string, outcome: DeliveryOutcome): void;
  onDeadLetter(route: string): void;
}

/**
 * The relays' metrics on the receiver's registry (labelled by route: a configured, bounded set): tries by outcome
 * (`delivered`, or why one failed), dead letters, and how long tries took.
 */
export function registerRelayMetrics(registry: Registry): RelayMetrics {
  const tries = new Counter({
    name: 'geohook_relay_tries_total',
    help: 'Relay tries by route and outcome: delivered, or the failure (status, redirect, timeout, network)',
    labelNames: ['route', 'outcome'],
    registers: [registry],
  });
  const deadLetters = new Counter({
    name: 'geohook_relay_dead_letters_total',
    help: 'Events that used every try of a relay route (its dead letters, until replayed)',
    labelNames: ['route'],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'geohook_relay_try_duration_seconds',
    help: 'How long a relay try took, answer read',
    labelNames: ['route'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
  return {
    onOutcome(route, outcome) {
      tries.inc({ route, outcome: outcome.delivered ? 'delivered' : outcome.reason });
      seconds.observe({ route }, outcome.durationMs / 1000);
    },
    onDeadLetter: (route) => deadLetters.inc({ route }),
  };
}
