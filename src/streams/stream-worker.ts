import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import { bullmq } from '../commonjs/bullmq.js';
import { ioredis } from '../commonjs/ioredis.js';
import { messageOf, StreamPublishError } from '../errors.js';
import type { Destination } from '../fanout/destination.js';
import { parseLoggedEvent, type LogEntry } from '../fanout/event-log.js';
import { FanoutLease } from '../fanout/fanout-lease.js';
import { matchEntries, readsHeads } from '../fanout/match-entries.js';
import { isStoredEvent, isWholeEvent, type RoutedEvent, type RoutedHead } from '../fanout/routed-event.js';
import { openQueue } from '../queue/open-queue.js';
import { replayedAtOf } from '../queue/replay-mark.js';
import type { RedisClient } from '../redis/connection.js';
import { streamLaneHeldKey, streamLaneLeaseKey } from '../redis/keys.js';
import type { DeliveryOutcome } from '../relay/deliver.js';
import { relayData } from '../relay/relay-event.js';
import { relayQueueName } from '../relay/relay-queues.js';
import type { RelayRoute } from '../relay/relay-route.js';
import type { RelayStats } from '../relay/relay-stats.js';
import { createRelayBackoff, relayAttempts } from '../relay/retry-schedule.js';
import { RelayTransformError } from '../relay/transform.js';
import { LaneJobs } from './lane-jobs.js';
import { LaneLog, type LaneRead } from './lane-log.js';
import { requeueTaken } from './lane-requeue.js';
import { orderKeyOf } from './order-key.js';
import { streamMessage, type StreamMessage } from './stream-message.js';
import type { StreamPublisher } from './stream-publisher.js';

/**
 * How long a taken job's lock, and a holder's word that it holds entries of the log, last (renewed while held): the
 * events of a receiver killed mid-publish are published again after it.
 */
export const STREAM_LOCK_MS = 10_000;
/** How long a lane's lease lasts unrenewed (renewed four times as often): a receiver that died is replaced after it. */
export const STREAM_LEASE_MS = 10_000;
/** Most events a lane holds at once: read from the log or taken from its queue, and not yet acknowledged by the broker. */
export const STREAM_WINDOW = 256;
/** Most events a lane reads from the log, or takes from its queue, in one round. */
const TAKE_BATCH = 128;
/**
 * Least room a round waits for before it reads: a read per finished event would cap the lane at one read per Redis
 * round trip, and waiting for room for a whole batch would leave a quarter of the window empty.
 */
const TAKE_MIN = 16;
/** Longest a lane waits for new events in one read, between looks at its lease, ms. */
const BLOCK_MS = 1000;
/** How often a lane looks for jobs in its queue (replays) while it reads the log, ms. */
const QUEUE_LOOK_MS = 250;

/** Options of {@link startStreamWorker}. */
export interface StreamWorkerOptions {
  route: RelayRoute;
  /** What the route takes, and the options of its dead letters' jobs. */
  destination: Destination;
  publisher: StreamPublisher;
  /** A connection that waits for Redis (`maxRetriesPerRequest: null`); the caller closes it (the lane blocks on duplicates). */
  connection: RedisClient;
  prefix: string;
  stats: RelayStats;
  logger: Logger;
  onOutcome?: (route: string, outcome: DeliveryOutcome) => void;
  onDeadLetter?: (route: string, event: { id: string }, err: Error) => void;
}

/**
 * An event the lane holds: read from the log (its entry: a change event's head when the route reads no rows), or taken
 * from the route's queue (a replay, or one an earlier version handed there).
 */
type HeldEvent = { key: string } & (
  { event: RoutedHead; entry: LogEntry<RoutedHead>; job?: never } | { event: RoutedEvent; job: Job<RoutedEvent>; entry?: never }
);

/** When a held event was replayed: a replay comes back through the route's queue, as a job. */
const replayMarkOf = (held: HeldEvent): string | undefined => (held.job === undefined ? undefined : replayedAtOf(held.job));

/** A held event whole: a head is parsed again (only a route with a transform needs it, and such a lane reads whole events). */
const wholeOf = (held: HeldEvent): RoutedEvent =>
  held.job !== undefined ? held.job.data : isWholeEvent(held.event) ? held.event : parseLoggedEvent(held.entry.data);

/**
 * The one lane of a stream route (docs/streams.md#order). One receiver at a time runs it (a lease in Redis); it reads
 * the event log through the route's consumer group in the log's order, takes the events the route's filter takes,
 * up to {@link STREAM_WINDOW} at once, and publishes them side by side, but the events of one feature one after the
 * other: each once the previous one was acknowledged, a failed one tried again in place on the route's schedule. So
 * each feature's events reach the broker in the order geohook stored them. A receiver that dies leaves its events
 * read and not finished; the next holder reads them again in their order once the dead one's word lapsed, and
 * publishes them again under the same ids, copies the broker's deduplication drops. After the last try, or at once
 * when trying again cannot help, an event is a dead letter (a failed job of the route's queue) and its feature moves
 * on; replayed, it comes back through the queue, after the events published meanwhile.
 */
export function startStreamWorker(options: StreamWorkerOptions): { close(): Promise<void> } {
  const { route, destination, publisher, stats, connection, prefix } = options;
  const log = options.logger.child({ component: 'stream', route: route.name });
  const backoff = createRelayBackoff({ scheduleMs: route.scheduleMs, jitter: route.jitter });
  const attempts = relayAttempts(route.scheduleMs);
  const stopping = new AbortController();
  // Every held event may wait on it between tries.
  setMaxListeners(STREAM_WINDOW + 16, stopping.signal);
  const token = randomUUID();
  const queueName = relayQueueName(route.name);
  const queue = openQueue<RoutedEvent>(queueName, { connection, prefix });
  // Waiting for new entries blocks a connection: one of the lane's own, so that closing ends the wait at once.
  const reader: RedisClient = connection instanceof ioredis.Cluster ? connection.duplicate() : connection.duplicate();
  reader.on('error', () => undefined);
  // A route that reads no rows (no row filter, no transform) reads change events up to their rows only.
  const laneLog = new LaneLog(connection, reader, prefix, route.name, {
    heads: route.transform === undefined && readsHeads([destination]),
  });
  // Its word that it holds entries read from the log, kept alive while it does: a new holder of the lease waits it out.
  const word = new FanoutLease(connection, streamLaneHeldKey(prefix, route.name), STREAM_LOCK_MS);
  const laneJobs = new LaneJobs(connection, queue, token, STREAM_LOCK_MS);
  const lease = new FanoutLease(connection, streamLaneLeaseKey(prefix, route.name), STREAM_LEASE_MS);
  /** Read or taken and not finished, by event id. */
  const held = new Map<string, HeldEvent>();
  /** Per feature, the publish of its last event taken (the next one waits for it), and how many of its events are held. */
  const chains = new Map<string, { last: Promise<void>; held: number }>();
  let leaseUntil = 0;
  let roomMade: (() => void) | undefined;
  const makeRoom = (): void => {
    roomMade?.();
    roomMade = undefined;
  };
  const room = (): Promise<void> => (stopping.signal.aborted ? Promise.resolve() : new Promise((resolve) => (roomMade = resolve)));
  const pause = (ms: number): Promise<void> => sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined);

  /**
   * The message of a held event on a route without a transform: a change event's JSON as the log holds it (a stored
   * event's is made without its `rawBody`); a replay's mark.
   */
  const plainMessage = (held: HeldEvent): StreamMessage => {
    const replayedAt = replayMarkOf(held);
    if (held.entry !== undefined && !isStoredEvent(held.event))
      return streamMessage(held.event, { body: held.entry.bytes ?? held.entry.data, replayedAt });
    return streamMessage(wholeOf(held), { replayedAt });
  };

  /** The message of a held event with the body the route's `transform` makes (a `RelayTransformError` when it fails); a replay's mark. */
  const transformedMessage = async (held: HeldEvent, transform: NonNullable<RelayRoute['transform']>): Promise<StreamMessage> => {
    const event = wholeOf(held);
    const body = await transform(relayData(event), event.id);
    return streamMessage(event, { body, replayedAt: replayMarkOf(held) });
  };

  /** Publishes one event, tried again in place: true once acknowledged, the error of its last try, or undefined when closing. */
  const publishInPlace = async (held: HeldEvent): Promise<true | Error | undefined> => {
    let message: StreamMessage;
    if (route.transform === undefined) message = plainMessage(held);
    else {
      try {
        message = await transformedMessage(held, route.transform);
      } catch (err) {
        if (!(err instanceof RelayTransformError)) throw err;
        // The transform fails the same way on every try: a dead letter now, with its text; the feature goes on.
        stats.failed(route.name, err.message);
        return new Error(`${err.code}: ${err.message}`);
      }
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
        log.debug({ err: error, eventId: held.event.id, attempt }, 'stream publish failed: trying again in place');
        await pause(backoff(attempt, 'custom', error));
      }
    }
    return undefined;
  };

  /**
   * Finishes a held event in a Redis call of its own: a published job completed, or a dead letter handed to the
   * route's queue (an entry's acknowledged in the same call). An entry published is finished by `laneLog.finish`.
   */
  const finish = async ({ entry, job }: HeldEvent, outcome: true | Error): Promise<void> => {
    if (outcome === true) {
      if (!(await laneJobs.complete(job!))) log.debug({ eventId: job!.id }, 'stream event not finished: taken again later');
    } else if (entry !== undefined) await laneLog.deadLetter(entry, queue, destination.jobOptions, outcome.message);
    else await job!.moveToFailed(new bullmq.UnrecoverableError(outcome.message), token, false);
  };

  /** Publishes a held event and finishes it; closing, it stays read or taken (for the next holder, in order). */
  const settle = async (event: HeldEvent, orderKey: string): Promise<void> => {
    const eventId = event.event.id;
    try {
      const outcome = await publishInPlace(event);
      if (outcome === undefined) return;
      // The usual end, without a call of its own.
      if (outcome === true && event.entry !== undefined) laneLog.finish(event.entry.id);
      else await finish(event, outcome);
      if (outcome !== true) {
        log.warn({ err: outcome, eventId, attempt: attempts }, 'stream dead letter');
        options.onDeadLetter?.(route.name, { id: eventId }, outcome);
      }
    } catch (err) {
      // Redis away, or its lock lost: it is published again by the next holder under its id, a copy the broker drops.
      log.debug({ err, eventId }, 'stream event not finished: published again later');
    } finally {
      held.delete(event.key);
      const chain = chains.get(orderKey)!;
      chain.held -= 1;
      if (chain.held === 0) chains.delete(orderKey);
      makeRoom();
    }
  };

  /** Holds a read or taken event and chains its publish after the previous one of its feature (at once when none is held). */
  const dispatch = (event: HeldEvent): void => {
    held.set(event.key, event);
    const key = orderKeyOf(event.event);
    const chain = chains.get(key);
    if (chain === undefined) {
      const first = { last: Promise.resolve(), held: 1 };
      chains.set(key, first);
      first.last = settle(event, key);
    } else {
      chain.held += 1;
      chain.last = chain.last.then(() => settle(event, key));
    }
  };

  /** Dispatches the entries of a read that the route takes, and finishes the others at once. */
  const dispatchRead = async (read: LaneRead): Promise<void> => {
    const { entries, taken } = await matchEntries(connection, prefix, read.entries, [destination]);
    const takenIds = new Set<string>();
    for (const index of taken.get(destination) ?? []) {
      const entry = entries[index]!;
      takenIds.add(entry.id);
      dispatch({ key: entry.id, event: entry.event, entry });
    }
    if (read.unreadable.length > 0)
      log.error({ entries: read.unreadable }, 'event log: entries that are no event (or were deleted), passed over');
    const passed = [...read.unreadable, ...read.entries.filter(({ id }) => !takenIds.has(id)).map(({ id }) => id)];
    for (const id of passed) laneLog.finish(id);
  };

  const renewLease = async (): Promise<void> => {
    const askedAt = Date.now();
    leaseUntil = (await lease.hold().catch(() => leaseUntil > askedAt)) ? askedAt + STREAM_LEASE_MS : 0;
  };
  // Takes only with half the lease ahead: a read in flight when it lapses is long done before another holder starts.
  const leaseHeld = (): boolean => Date.now() < leaseUntil - STREAM_LEASE_MS / 2;
  const leaseTimer = setInterval(() => void renewLease(), STREAM_LEASE_MS / 4).unref();
  const lockTimer = setInterval(() => {
    if (held.size > 0) void word.hold().catch(() => undefined);
    for (const { job } of held.values()) void job?.extendLock(token, STREAM_LOCK_MS).catch(() => undefined);
  }, STREAM_LOCK_MS / 3).unref();

  /**
   * Once per holding of the lease, and after a round that failed, before anything new: the events an earlier holder
   * (or the failed round) left, taken from the queue or read from the log, once no other holder holds them, in their
   * order. False while one does.
   */
  const recover = async (): Promise<boolean> => {
    if (!(await word.hold())) return false;
    // What this holder finished is acknowledged first: read again, it would be published again.
    await laneLog.flush();
    const back = await requeueTaken(connection, queue, token);
    if (back < 0) return false;
    if (back > 0) log.info({ events: back }, 'stream lane: events taken before are put back in order');
    let again = 0;
    for (let after = '0'; ;) {
      const read = await laneLog.readHeld(after, TAKE_BATCH);
      if (read?.lastId === undefined) break;
      if (held.size === 0) await word.hold();
      await dispatchRead(read);
      again += read.entries.length;
      after = read.lastId;
    }
    if (again > 0) log.info({ events: again }, 'stream lane: events read before are published again in order');
    return true;
  };

  /** One round: the jobs waiting in the route's queue (replays) first, else what is new in the log (waited for a while). */
  let queueLookedAt = 0;
  const takeMore = async (): Promise<void> => {
    const room = Math.min(TAKE_BATCH, STREAM_WINDOW - held.size);
    // The queue is looked at every QUEUE_LOOK_MS (and at once while it gives jobs), not before every read of the log.
    if (Date.now() - queueLookedAt >= QUEUE_LOOK_MS) {
      const jobs = await laneJobs.take(room);
      for (const job of jobs) dispatch({ key: `job:${job.id!}`, event: job.data, job });
      if (jobs.length > 0) return;
      queueLookedAt = Date.now();
    }
    if (held.size === 0) await word.hold();
    const read = await laneLog.readNew(room, BLOCK_MS);
    if (read === undefined) await pause(BLOCK_MS);
    else await dispatchRead(read);
  };

  const run = async (): Promise<void> => {
    let configured = false;
    // Whether this holding of the lease began with the events an earlier holder left.
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
        // Little room, or events of an earlier holding still under way: the next read waits for room.
        if (held.size > STREAM_WINDOW - TAKE_MIN || (!recovered && held.size > 0)) {
          await room();
          continue;
        }
        if (!recovered) {
          recovered = await recover();
          if (!recovered) await pause(STREAM_LOCK_MS / 10);
          continue;
        }
        await takeMore();
      } catch (err) {
        if (stopping.signal.aborted) break;
        log.warn({ err }, 'stream lane: Redis unavailable, retrying');
        // A round that failed may have read entries it did not dispatch: they are read again, as a new holder would.
        recovered = false;
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
      // Its wait for new entries ends at once.
      reader.disconnect();
      await running;
      // Publishes under way end within the route's timeout; what is left goes back (taken jobs) or stays read, in
      // order, for the next holder, which reads it at once.
      await Promise.all([...chains.values()].map(({ last }) => last));
      clearInterval(lockTimer);
      await requeueTaken(connection, queue, token).catch(() => undefined);
      await laneLog.flush();
      await word.release().catch(() => undefined);
      await lease.release().catch(() => undefined);
      await queue.close().catch(() => undefined);
      await publisher.close();
    },
  };
}
