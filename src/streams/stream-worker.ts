import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { messageOf, StreamPublishError } from '../errors.js';
import type { RoutedEvent } from '../fanout/routed-event.js';
import type { RedisClient } from '../redis/connection.js';
import type { DeliveryOutcome } from '../relay/deliver.js';
import { relayQueueName } from '../relay/relay-queues.js';
import type { RelayRoute } from '../relay/relay-route.js';
import type { RelayStats } from '../relay/relay-stats.js';
import { createRelayBackoff, relayAttempts } from '../relay/retry-schedule.js';
import type { StreamPublisher } from './stream-publisher.js';

/** How long a publish's lock lasts (renewed while it runs): a receiver killed mid-publish has the event taken again after it. */
export const STREAM_LOCK_MS = 10_000;
/** How often a worker looks for events whose receiver died. */
export const STREAM_STALLED_CHECK_MS = 5_000;

/** Options of {@link startStreamWorker}. */
export interface StreamWorkerOptions {
  route: RelayRoute;
  publisher: StreamPublisher;
  /** Blocking reads: a connection that waits for Redis (`maxRetriesPerRequest: null`); the caller closes it. */
  connection: RedisClient;
  prefix: string;
  stats: RelayStats;
  logger: Logger;
  onOutcome?: (route: string, outcome: DeliveryOutcome) => void;
  onDeadLetter?: (route: string, job: Job<RoutedEvent>, err: Error) => void;
}

/**
 * The one lane of a stream route (docs/streams.md#order): its queue (`relay-<name>`, filled by the fan-out in the
 * event log's order) is taken one event at a time by every receiver together (BullMQ's global concurrency 1), and
 * a failed publish is tried again in place, on the route's schedule, before the next event is taken. So events
 * reach the broker in the order geohook stored them, per feature and overall, whichever receiver publishes; a
 * receiver that dies mid-publish leaves the event to the next one (its lock lapses), which publishes it again under
 * the same id, a copy the broker's deduplication drops. After the last try, or at once when trying again cannot
 * help, the event is a dead letter and the lane moves on; replayed, it comes after the events published meanwhile.
 */
export function startStreamWorker(options: StreamWorkerOptions): { close(): Promise<void> } {
  const { route, publisher, stats } = options;
  const log = options.logger.child({ component: 'stream', route: route.name });
  const backoff = createRelayBackoff({ scheduleMs: route.scheduleMs, jitter: route.jitter });
  const attempts = relayAttempts(route.scheduleMs);
  const stopping = new AbortController();
  const queueName = relayQueueName(route.name);

  const publish = async (job: Job<RoutedEvent>): Promise<void> => {
    for (let attempt = 1; ; attempt += 1) {
      const startedAt = performance.now();
      try {
        await publisher.publish(job.data);
        options.onOutcome?.(route.name, { delivered: true, status: 0, durationMs: performance.now() - startedAt });
        stats.delivered(route.name);
        return;
      } catch (err) {
        const error = err instanceof StreamPublishError ? err : new StreamPublishError(messageOf(err), {}, { cause: err });
        const durationMs = performance.now() - startedAt;
        const reason = error.timeout ? 'timeout' : 'network';
        options.onOutcome?.(route.name, { delivered: false, reason, clientError: false, gone: false, message: error.message, durationMs });
        stats.failed(route.name, error.message);
        if (!error.retryable || attempt >= attempts) throw new UnrecoverableError(error.message);
        log.debug({ err: error, eventId: job.id, attempt }, 'stream publish failed: trying again in place');
        await sleep(backoff(attempt, 'custom', error), undefined, { signal: stopping.signal }).catch(() => undefined);
        // Closing: the event stays active until its lock lapses, then the next worker publishes it, in its place.
        if (stopping.signal.aborted) return new Promise<void>(() => undefined);
      }
    }
  };

  const worker = new Worker<RoutedEvent>(queueName, publish, {
    connection: options.connection,
    prefix: options.prefix,
    concurrency: 1,
    autorun: false,
    lockDuration: STREAM_LOCK_MS,
    stalledInterval: STREAM_STALLED_CHECK_MS,
    maxStalledCount: 10,
  });
  worker.on('failed', (job, err) => {
    if (job === undefined) return;
    log.warn({ err, eventId: job.id, attempt: attempts }, 'stream dead letter');
    options.onDeadLetter?.(route.name, job, err);
  });
  worker.on('error', (err) => log.error({ err }, 'stream worker error'));

  // One event at a time across every receiver: set before this worker takes any.
  const started = (async () => {
    const queue = new Queue(queueName, { connection: options.connection, prefix: options.prefix });
    queue.on('error', () => undefined);
    try {
      while (!stopping.signal.aborted) {
        try {
          await queue.setGlobalConcurrency(1);
          void worker.run().catch((err: unknown) => log.error({ err }, 'stream worker stopped'));
          return;
        } catch (err) {
          log.warn({ err }, 'stream lane not set up yet: retrying');
          await sleep(1000, undefined, { signal: stopping.signal }).catch(() => undefined);
        }
      }
    } finally {
      await queue.close().catch(() => undefined);
    }
  })();

  return {
    async close() {
      stopping.abort();
      await started;
      // Forced, as relay workers are: a publish cut short is taken again, under the same id.
      await worker.close(true);
      await publisher.close();
    },
  };
}
