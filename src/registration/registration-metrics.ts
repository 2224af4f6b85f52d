import { Gauge, type Registry } from 'prom-client';
import type { RegistrationSummary } from './service-states.js';

/**
 * Self-registration's gauges, read from the receiver's own registration at scrape time: services registered and
 * failing, each failing service (its reason as a label would be unbounded: `/readyz` and doctor say it), and the
 * length of the last pass.
 */
export function registerRegistrationMetrics(registry: Registry, summary: () => RegistrationSummary): void {
  new Gauge({
    name: 'geohook_registration_services',
    help: 'Services self-registration works on, by state: registered, or failing (not registered, retried on its own)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { registered, failingCount } = summary();
      this.set({ state: 'registered' }, registered);
      this.set({ state: 'failing' }, failingCount);
    },
  });
  new Gauge({
    name: 'geohook_registration_failing',
    help: '1 for each service self-registration could not register (the first 100; see /readyz for the reasons)',
    labelNames: ['service'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { service } of summary().failing) this.set({ service }, 1);
    },
  });
  new Gauge({
    name: 'geohook_registration_pass_seconds',
    help: 'How long the last full registration pass took',
    registers: [registry],
    collect() {
      const seconds = summary().lastPassSeconds;
      if (seconds !== undefined) this.set(seconds);
    },
  });
}
