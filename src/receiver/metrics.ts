import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EventQueue } from '../queue/event-queue.js';
import type { QueueName } from '../queue/names.js';
import { jobStates, QueueInspector, type JobCounts } from '../queue/queue-inspector.js';

/** How a delivery ended, as counted in `geohook_deliveries_total`. */
export type DeliveryOutcome = 'accepted' | 'duplicate' | 'rejected' | 'unavailable' | 'error';

/** The receiver's Prometheus metrics, on a registry of its own (several receivers may share a process). */
export interface ReceiverMetrics {
  registry: Registry;
  deliveries: Counter<'hook' | 'outcome' | 'status'>;
  signatureFailures: Counter<'hook' | 'reason'>;
  crcChallenges: Counter<'hook' | 'outcome'>;
  enqueueSeconds: Histogram<'queue'>;
  connectionsDropped: Counter;
}

/** Creates the metrics; queue depth and job counts are read from Redis at scrape time. */
export function createReceiverMetrics(eventQueue: EventQueue): ReceiverMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'geohook_' });
  const inspector = new QueueInspector({ queues: eventQueue });
  // Both queue gauges are collected at once per scrape: they share one read of the counts.
  let reading: Promise<Record<QueueName, JobCounts>> | undefined;
  const counts = (): Promise<Record<QueueName, JobCounts>> => (reading ??= inspector.counts().finally(() => (reading = undefined)));
  new Gauge({
    name: 'geohook_queue_depth',
    help: 'Jobs waiting, prioritized or delayed per queue',
    labelNames: ['queue'],
    registers: [registry],
    async collect() {
      try {
        for (const [queue, jobs] of Object.entries(await counts())) this.set({ queue }, jobs.waiting + jobs.delayed + jobs.prioritized);
      } catch {
        // Redis is unreachable: keep the last values; /readyz reports the outage.
      }
    },
  });
  new Gauge({
    name: 'geohook_queue_jobs',
    help: 'Jobs per queue and state (failed: the dead letters)',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      try {
        for (const [queue, jobs] of Object.entries(await counts())) for (const state of jobStates) this.set({ queue, state }, jobs[state]);
      } catch {
        // As above.
      }
    },
  });
  return {
    registry,
    deliveries: new Counter({
      name: 'geohook_deliveries_total',
      help: 'Deliveries by hook, outcome and HTTP status',
      labelNames: ['hook', 'outcome', 'status'],
      registers: [registry],
    }),
    signatureFailures: new Counter({
      name: 'geohook_signature_failures_total',
      help: 'Deliveries refused for their signature, by hook and reason',
      labelNames: ['hook', 'reason'],
      registers: [registry],
    }),
    crcChallenges: new Counter({
      name: 'geohook_crc_challenges_total',
      help: 'crc_token challenges by hook and outcome (answered, or the refusal code)',
      labelNames: ['hook', 'outcome'],
      registers: [registry],
    }),
    enqueueSeconds: new Histogram({
      name: 'geohook_enqueue_duration_seconds',
      help: 'Time for Redis to store an event',
      labelNames: ['queue'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    connectionsDropped: new Counter({
      name: 'geohook_connections_dropped_total',
      help: 'Connections closed as soon as they were accepted, maxConnections being open',
      registers: [registry],
    }),
  };
}
