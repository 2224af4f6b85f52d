import type { Job, Worker } from 'bullmq';
import type { Logger } from 'pino';
import { bullmq } from '../commonjs/bullmq.js';
import type { RoutedEvent } from '../fanout/routed-event.js';
import { replayedAtOf } from '../queue/replay-mark.js';
import { logWorkerErrors } from '../queue/worker-errors.js';
import type { RedisClient } from '../redis/connection.js';
import { deliver, deliveryError, type DeliveryOutcome, type RelayFetch } from './deliver.js';
import { REPLAY_HEADER, type RelayRequest } from './formats/relay-request.js';
import { relayQueueName } from './relay-queues.js';
import { RelayRouteLines } from './relay-route-lines.js';
import type { RelayRoute } from './relay-route.js';
import type { RelayStats } from './relay-stats.js';
import { createRelayBackoff } from './retry-schedule.js';
import { RelayTransformError } from './transform.js';

/** @defaultValue of {@link RelayWorkerOptions.concurrency}: tries in flight per route and receiver. */
export const DEFAULT_RELAY_CONCURRENCY = 64;

/**
 * How long a try's lock lasts (renewed while it runs): a worker killed mid-try has its jobs taken again by another
 * (or its successor) within this and {@link RELAY_STALLED_CHECK_MS}, under the same `webhook-id`.
 */
export const RELAY_LOCK_MS = 10_000;

/** How often a worker looks for jobs whose worker died. */
export const RELAY_STALLED_CHECK_MS = 5_000;

/** Options of {@link startRelayWorker}. */
export interface RelayWorkerOptions {
  route: RelayRoute;
  /** Blocking reads: a connection that waits for Redis (`maxRetriesPerRequest: null`); the caller closes it. */
  connection: RedisClient;
  prefix: string;
  stats: RelayStats;
  logger: Logger;
  /** Tries in flight at once. @defaultValue 64 */
  concurrency?: number;
  /** The HTTP client (`createRelayTransport`'s keeps connections to the route open). @defaultValue globalThis.fetch */
  fetch?: RelayFetch;
  /** Each try's outcome (metrics). */
  onOutcome?: (route: string, outcome: DeliveryOutcome) => void;
  /** A job that used its last try: now a dead letter of the route. */
  onDeadLetter?: (route: string, job: Job<RoutedEvent>, err: Error) => void;
}

/**
 * The worker of one route's queue: each job is one try of one event, signed anew, POSTed to the route's URL only;
 * a failed try throws a `GEOHOOK_ERR_RELAY_DELIVERY` error so that BullMQ tries again on the route's schedule
 * (`Retry-After` honoured), and after the last try (or a 410 Gone) the job stays in the failed set: a dead letter,
 * replayed with `geohook relay replay`. An event the route's transform fails on is a dead letter at once, its reason the
 * `GEOHOOK_ERR_RELAY_TRANSFORM` error's text.
 */
export function startRelayWorker(options: RelayWorkerOptions): Worker<RoutedEvent> {
  const { route, stats } = options;
  const log = options.logger.child({ component: 'relay', route: route.name });
  // One line per change of the route's state, not one per try.
  const lines = new RelayRouteLines(log, route.name);
  const deliverOptions = { timeoutMs: route.timeoutMs, ...(options.fetch === undefined ? {} : { fetch: options.fetch }) };
  const worker = new bullmq.Worker<RoutedEvent>(
    relayQueueName(route.name),
    async (job) => {
      let request: RelayRequest;
      try {
        request = await route.request(job.data, Date.now());
      } catch (err) {
        if (!(err instanceof RelayTransformError)) throw err;
        // The transform fails the same way on every try: a dead letter now, with its text; the next event goes on.
        stats.failed(route.name, err.message);
        throw new bullmq.UnrecoverableError(`${err.code}: ${err.message}`);
      }
      const replayedAt = replayedAtOf(job);
      if (replayedAt !== undefined) request = { ...request, headers: { ...request.headers, [REPLAY_HEADER]: replayedAt } };
      const outcome = await deliver(route.url, request, deliverOptions);
      options.onOutcome?.(route.name, outcome);
      if (outcome.delivered) {
        lines.delivered();
        return stats.delivered(route.name);
      }
      stats.failed(route.name, outcome.message);
      lines.failed(outcome.message);
      // 410 Gone: the endpoint asks not to be sent more (Standard Webhooks): no other try, a dead letter now.
      if (outcome.gone) throw new bullmq.UnrecoverableError(`${outcome.message} (Gone: not tried again)`);
      throw deliveryError(outcome);
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? DEFAULT_RELAY_CONCURRENCY,
      lockDuration: RELAY_LOCK_MS,
      stalledInterval: RELAY_STALLED_CHECK_MS,
      settings: { backoffStrategy: createRelayBackoff({ scheduleMs: route.scheduleMs, jitter: route.jitter }) },
    },
  );
  worker.on('failed', (job, err) => {
    if (job === undefined) return;
    const final = err instanceof bullmq.UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (!final) return log.debug({ failed: err.message, eventId: job.id, attempt: job.attemptsMade }, 'relay try failed');
    lines.deadLetter(job.id, err.message, job.attemptsMade);
    options.onDeadLetter?.(route.name, job, err);
  });
  logWorkerErrors(worker, log, 'relay worker error');
  return worker;
}
