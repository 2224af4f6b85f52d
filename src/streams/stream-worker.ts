import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { messageOf, StreamPublishError } from '../errors.js';
import { FanoutLease } from '../fanout/fanout-lease.js';
import type { RoutedEvent } from '../fanout/routed-event.js';
import { openQueue } from '../queue/open-queue.js';
import { replayedAtOf } from '../queue/replay-mark.js';
import { logWorkerErrors } from '../queue/worker-errors.js';
import type { RedisClient } from '../redis/connection.js';
import { streamLaneLeaseKey } from '../redis/keys.js';
import type { DeliveryOutcome } from '../relay/deliver.js';
import { relayData } from '../relay/relay-event.js';
import { relayQueueName } from '../relay/relay-queues.js';
import type { RelayRoute } from '../relay/relay-route.js';
import type { RelayStats } from '../relay/relay-stats.js';
import { createRelayBackoff, relayAttempts } from '../relay/retry-schedule.js';
import { RelayTransformError } from '../relay/transform.js';
import { LaneJobs } from './lane-jobs.js';
import { requeueTaken } from './lane-requeue.js';
import { orderKeyOf } from './order-key.js';
import { streamMessage, type StreamMessage } from './stream-message.js';
import type { StreamPublisher } from './stream-publisher.js';

/** How long a taken event's lock lasts (renewed while it is held): a receiver killed mid-publish has it taken again after it. */
export const STREAM_LOCK_MS = 10_000;
/** How long a lane's lease lasts unrenewed (renewed four times as often): a receiver that died is replaced after it. */
export const STREAM_LEASE_MS = 10_000;
/** Most events a lane holds at once: taken from its queue and not yet acknowledged by the broker. */
export const STREAM_WINDOW = 256;
/** Most events a lane takes from its queue in one round. */
const TAKE_BATCH = 64;
/** Longest a lane waits for new events in one call (seconds: BullMQ's unit), between looks at its lease. */
const BLOCK_SECONDS = 1;

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
 * The one lane of a stream route (docs/streams.md#order). One receiver at a time runs it (a lease in Redis); it takes
 * events from the route's queue (`relay-<name>`, filled by the fan-out in the event log's order) in batches, in
 * order, up to {@link STREAM_WINDOW} at once, and publishes them side by side, but the events of one feature one
 * after the other: each once the previous one was acknowledged, a failed one tried again in place on the route's
 * schedule. So each feature's events reach the broker in the order geohook stored them. A receiver that dies leaves
 * its events taken; the next holder puts them back in their order once their locks lapse, and publishes them again
 * under the same ids, copies the broker's deduplication drops. After the last try, or at once when trying again
 * cannot help, an event is a dead letter and its feature moves on; replayed, it comes after the events published
 * meanwhile.
 */
export function startStreamWorker(options: StreamWorkerOptions): { close(): Promise<void> } {
  const { route, publisher, stats, connection, prefix } = options;
  const log = options.logger.child({ component: 'stream', route: route.name });
  const backoff = createRelayBackoff({ scheduleMs: route.scheduleMs, jitter: route.jitter });
  const attempts = relayAttempts(route.scheduleMs);
  const stopping = new AbortController();
  // Every held event may wait on it between tries.
  setMaxListeners(STREAM_WINDOW + 16, stopping.signal);
  const token = randomUUID();
  const queueName = relayQueueName(route.name);
  const queue = openQueue<RoutedEvent>(queueName, { connection, prefix });
  const worker = new Worker<RoutedEvent>(queueName, null, {
    connection,
    prefix,
    autorun: false,
    lockDuration: STREAM_LOCK_MS,
    skipStalledCheck: true,
    skipLockRenewal: true,
    drainDelay: BLOCK_SECONDS,
  });
  logWorkerErrors(worker, log, 'stream worker error');
  const laneJobs = new LaneJobs(connection, queue, token, STREAM_LOCK_MS);
  const lease = new FanoutLease(connection, streamLaneLeaseKey(prefix, route.name), STREAM_LEASE_MS);
  /** Taken and not finished, by job id. */
  const held = new Map<string, Job<RoutedEvent>>();
  /** Per feature, the publish of its last event taken: the next one waits for it. */
  const chains = new Map<string, Promise<void>>();
  let leaseUntil = 0;
  let roomMade: (() => void) | undefined;
  const makeRoom = (): void => {
    roomMade?.();
    roomMade = undefined;
  };
  const room = (): Promise<void> => (stopping.signal.aborted ? Promise.resolve() : new Promise((resolve) => (roomMade = resolve)));
  const pause = (ms: number): Promise<void> => sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined);

  /** The message of a held event: the body the route's transform makes (a `RelayTransformError` when it fails), a replay's mark. */
  const messageFor = async (job: Job<RoutedEvent>): Promise<StreamMessage> =>
    streamMessage(job.data, {
      body: route.transform === undefined ? undefined : await route.transform(relayData(job.data), job.id!),
      replayedAt: replayedAtOf(job),
    });

  /** Publishes one event, tried again in place: true once acknowledged, the error of its last try, or undefined when closing. */
  const publishInPlace = async (job: Job<RoutedEvent>): Promise<true | Error | undefined> => {
    let message: StreamMessage;
    try {
      message = await messageFor(job);
    } catch (err) {
      if (!(err instanceof RelayTransformError)) throw err;
      // The transform fails the same way on every try: a dead letter now, with its text; the feature goes on.
      stats.failed(route.name, err.message);
      return new Error(`${err.code}: ${err.message}`);
    }
    for (let attempt = 1; !stopping.signal.aborted; attempt += 1) {
      const startedAt = performance.now();
      try {
        await publisher.publish(message);
        options.onOutcome?.(route.name, { delivered: true, status: 0, durationMs: performance.now() - startedAt });
        stats.delivered(route.name);
        return true;
      } catch (err) {
        const error = err instanceof StreamPublishError ? err : new StreamPublishError(messageOf(err), {}, { cause: err });
        const durationMs = performance.now() - startedAt;
        const reason = error.timeout ? 'timeout' : 'network';
        options.onOutcome?.(route.name, { delivered: false, reason, clientError: false, gone: false, message: error.message, durationMs });
        stats.failed(route.name, error.message);
        if (!error.retryable || attempt >= attempts) return error;
        log.debug({ err: error, eventId: job.id, attempt }, 'stream publish failed: trying again in place');
        await pause(backoff(attempt, 'custom', error));
      }
    }
    return undefined;
  };

  /** Publishes a held event and finishes its job: completed, or a dead letter; closing, it stays taken (put back in order). */
  const settle = async (job: Job<RoutedEvent>): Promise<void> => {
    try {
      const outcome = await publishInPlace(job);
      if (outcome === true) {
        if (!(await laneJobs.complete(job))) log.debug({ eventId: job.id }, 'stream event not finished: taken again later');
      } else if (outcome !== undefined) {
        await job.moveToFailed(new UnrecoverableError(outcome.message), token, false);
        log.warn({ err: outcome, eventId: job.id, attempt: attempts }, 'stream dead letter');
        options.onDeadLetter?.(route.name, job, outcome);
      }
    } catch (err) {
      // Its lock was lost (put back meanwhile): it is published again under its id, a copy the broker drops.
      log.debug({ err, eventId: job.id }, 'stream event not finished: taken again later');
    } finally {
      held.delete(job.id!);
      makeRoom();
    }
  };

  /** Holds a taken event and chains its publish after the previous one of its feature. */
  const dispatch = (job: Job<RoutedEvent>): void => {
    held.set(job.id!, job);
    const key = orderKeyOf(job.data);
    const next = (chains.get(key) ?? Promise.resolve()).then(() => settle(job));
    chains.set(key, next);
    void next.then(() => {
      if (chains.get(key) === next) chains.delete(key);
    });
  };

  const renewLease = async (): Promise<void> => {
    const askedAt = Date.now();
    leaseUntil = (await lease.hold().catch(() => leaseUntil > askedAt)) ? askedAt + STREAM_LEASE_MS : 0;
  };
  // Takes only with half the lease ahead: a take in flight when it lapses is long done before another holder starts.
  const leaseHeld = (): boolean => Date.now() < leaseUntil - STREAM_LEASE_MS / 2;
  const leaseTimer = setInterval(() => void renewLease(), STREAM_LEASE_MS / 4).unref();
  const lockTimer = setInterval(() => {
    for (const job of held.values()) void job.extendLock(token, STREAM_LOCK_MS).catch(() => undefined);
  }, STREAM_LOCK_MS / 3).unref();

  const run = async (): Promise<void> => {
    let configured = false;
    // Whether this holding of the lease began with the events taken before it put back.
    let recovered = false;
    while (!stopping.signal.aborted) {
      try {
        if (!configured) {
          // The lease orders the lane now: a global concurrency (1, set by earlier versions) would only slow it.
          await queue.removeGlobalConcurrency();
          configured = true;
        }
        if (!leaseHeld()) {
          recovered = false;
          await renewLease();
          if (!leaseHeld()) await pause(STREAM_LEASE_MS / 4);
          continue;
        }
        // No room for a whole batch, or events of an earlier holding still under way: the next take waits for room
        // (taking one event per round trip as each is done would cap the lane at one take per round trip).
        if (held.size > STREAM_WINDOW - TAKE_BATCH || (!recovered && held.size > 0)) {
          await room();
          continue;
        }
        if (!recovered) {
          // Events taken before (by a receiver that stopped) go back first, in order, once their locks lapsed.
          const back = await requeueTaken(connection, queue, token);
          if (back < 0) {
            await pause(STREAM_LOCK_MS / 10);
            continue;
          }
          if (back > 0) log.info({ events: back }, 'stream lane: events taken before are put back in order');
          recovered = true;
        }
        const first = await worker.getNextJob(token, { block: true });
        if (first === undefined) continue;
        // The first through BullMQ (its wait on the marker, delayed jobs promoted), published while the rest of the
        // batch is taken in one call; dispatched in the order taken.
        dispatch(first);
        for (const job of await laneJobs.take(Math.min(TAKE_BATCH - 1, STREAM_WINDOW - held.size))) dispatch(job);
      } catch (err) {
        if (stopping.signal.aborted) break;
        log.warn({ err }, 'stream lane: Redis unavailable, retrying');
        await pause(1000);
      }
    }
  };
  const running = run();

  return {
    async close() {
      stopping.abort();
      makeRoom();
      clearInterval(leaseTimer);
      await worker.close(true).catch(() => undefined);
      await running;
      // Publishes under way end within the route's timeout; what is left taken goes back in order for the next holder.
      await Promise.all(chains.values());
      clearInterval(lockTimer);
      await requeueTaken(connection, queue, token).catch(() => undefined);
      await lease.release().catch(() => undefined);
      await queue.close().catch(() => undefined);
      await publisher.close();
    },
  };
}
