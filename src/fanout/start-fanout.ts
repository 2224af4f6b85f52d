import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { ioredis } from '../commonjs/ioredis.js';
import { DEFAULT_FANOUT_MAX_LAG_SECONDS } from '../config/defaults.js';
import type { RedisClient } from '../redis/connection.js';
import { eventLogKey, fanoutKey, fanoutLeaseKey } from '../redis/keys.js';
import { createAckYield } from './ack-yield.js';
import type { Destination } from './destination.js';
import { firstEntryAfter, parseLogEntries, parseLogHeads, readEventLog, type RawEntries } from './event-log.js';
import { FanoutLease } from './fanout-lease.js';
import { FanoutScript, type HandOver } from './fanout-script.js';
import { LagTrend } from './lag-trend.js';
import { LOG_START, logIdMs } from './log-id.js';
import { makeReaderGroups, readerPositions, type LogReader } from './log-readers.js';
import { matchEntries, readsHeads } from './match-entries.js';

/** The destinations of a version of the subscriptions. */
export type DestinationSource = (version: string) => Promise<readonly Destination[]>;

/** Options of {@link startFanout}. */
export interface FanoutOptions {
  /** A connection for the fan-out's commands, made with `maxRetriesPerRequest: null`; the caller closes it (the fan-out blocks on a duplicate of its own). */
  connection: RedisClient;
  prefix: string;
  /** The relay routes' destinations. */
  routes: readonly Destination[];
  /** Destinations that read the log themselves (stream lanes): their groups are made here, and the log kept for them. @defaultValue none */
  readers?: readonly LogReader[];
  /** The subscriptions' destinations, read again whenever their version changes. @defaultValue none */
  subscriptions?: DestinationSource;
  /** How long the log keeps an event once every destination has it (what `--from` can reach back to), ms. */
  retentionMs: number;
  logger: Logger;
  /** Log entries handed over per call. @defaultValue 500 */
  batch?: number;
  /** How long the lease of the receiver that runs the fan-out lasts unless renewed, ms. @defaultValue 5000 */
  leaseMs?: number;
  /**
   * Most jobs one hand-over adds (entries × destinations): each call holds Redis, and every acknowledgement waits
   * behind it, for its length (about 7 ms at the default; a call's fixed cost is a few per cent of it). @defaultValue 250
   */
  maxJobsPerCall?: number;
  /**
   * How long the fan-out waits after a hand-over that emptied the log before it reads again, ms: the entries stored
   * meanwhile go in one call, whose fixed cost (per destination) they share. Waiting on an empty log, it reads an
   * entry as soon as one is stored. @defaultValue 5
   */
  lingerMs?: number;
  /** Shortest time between two trims of the log (and, while no event comes, two applications of the backlog caps), ms. @defaultValue 1000 */
  trimIntervalMs?: number;
  /**
   * Whether the acknowledgements run at their capacity (the receiver's measure): while they do, the fan-out hands
   * nothing over, up to `maxLagMs`. @defaultValue never
   */
  saturated?: () => boolean;
  /** Longest the fan-out leaves an event in the log while the acknowledgements are saturated, ms (0: it never yields). @defaultValue 30000 */
  maxLagMs?: number;
  /** Each hand-over done: its destination jobs, by destination name (metrics, tests). */
  onHandOver?: (entries: number) => void;
  /** Each time it yields to saturated acknowledgements, leaving entries in the log (tests). */
  onYield?: () => void;
}

/** The running fan-out. */
export interface Fanout {
  close(): Promise<void>;
}

interface FanoutState {
  cursor: string;
  version: string;
  /** Subscriptions reading the log from an earlier time: destination name → where they read next. */
  catchingUp: Map<string, string>;
}

const CATCHUP = 'catchup:';
/** How often a fan-out yielding to the acknowledgements looks whether they still need Redis, ms. */
const YIELD_MS = 50;

/**
 * The one fan-out of geohook's events (docs/subscriptions.md): every event the accept script stores is also in the
 * event log; this loop hands each log entry to every relay route and subscription that takes it, in the log's order,
 * and moves its cursor past them in the same Redis call (`fanout.lua`), so that nothing is handed over twice or
 * skipped, whichever receiver does it and whenever one dies. One receiver at a time does the work (a lease); the
 * acknowledgement never waits for it, and while the acknowledgements are saturated the fan-out yields Redis to them,
 * up to a bound on its lag (acks first). Stream lanes read the log themselves (`readers`): the fan-out makes their
 * consumer groups at its cursor and trims no entry one of them has not finished.
 */
export function startFanout(options: FanoutOptions): Fanout {
  const {
    connection,
    prefix,
    routes,
    readers = [],
    batch = 500,
    leaseMs = 5000,
    trimIntervalMs = 1000,
    maxJobsPerCall = 250,
    lingerMs = 5,
  } = options;
  const log = options.logger.child({ component: 'fanout' });
  const script = new FanoutScript(connection, prefix);
  const lease = new FanoutLease(connection, fanoutLeaseKey(prefix), leaseMs);
  // Waiting for new entries blocks a connection: one of its own, so that closing ends the wait at once.
  const waiter: RedisClient = connection instanceof ioredis.Cluster ? connection.duplicate() : connection.duplicate();
  waiter.on('error', () => undefined);
  const logKey = eventLogKey(prefix);
  const stateKey = fanoutKey(prefix);
  const skipped = (id: string, err: unknown): void => log.error({ err, entry: id }, 'event log: an entry that is no event, passed over');
  let cached: { version: string; destinations: readonly Destination[] } | undefined;
  let lastTrimMs = 0;
  let state: FanoutState | undefined;
  let renewAt = 0;
  /** Whether the last read of the log found a whole batch and the log grows faster than the fan-out hands it over. */
  let behind = false;
  const trend = new LagTrend();
  let closed = false;
  const stopping = new AbortController();
  const ackYield =
    options.saturated === undefined
      ? undefined
      : createAckYield({
          saturated: options.saturated,
          maxLagMs: options.maxLagMs ?? DEFAULT_FANOUT_MAX_LAG_SECONDS * 1000,
          nextAfter: (cursor) => firstEntryAfter(connection, logKey, cursor),
        });

  const readState = async (): Promise<FanoutState> => {
    let fields = await connection.hgetall(stateKey);
    // The first fan-out on this prefix: the cursor starts before every entry (the script compares with it).
    if (fields.cursor === undefined) {
      await connection.hsetnx(stateKey, 'cursor', LOG_START);
      fields = await connection.hgetall(stateKey);
    }
    // Before the cursor moves past entries the readers get no other way.
    await makeReaderGroups(connection, logKey, readers, fields.cursor ?? LOG_START);
    const catchingUp = new Map<string, string>();
    for (const [field, value] of Object.entries(fields)) if (field.startsWith(CATCHUP)) catchingUp.set(field.slice(CATCHUP.length), value);
    return { cursor: fields.cursor ?? LOG_START, version: fields.version ?? '0', catchingUp };
  };

  const destinationsOf = async (version: string): Promise<readonly Destination[]> => {
    if (cached?.version !== version) cached = { version, destinations: (await options.subscriptions?.(version)) ?? [] };
    return cached.destinations;
  };

  /**
   * Hands the entries after the cursor to every destination that is not catching up, waiting up to `waitMs` for the
   * first when there is none yet (it reads as soon as one is stored); true when there were any. The cursor of `state`
   * moves with the hand-over.
   */
  const handNew = async (
    state: FanoutState,
    waitMs: number,
  ): Promise<{ fresh: boolean; full?: boolean; growing?: boolean; outcome?: HandOver; none?: boolean }> => {
    const subscriptions = await destinationsOf(state.version);
    const live = [...routes, ...subscriptions.filter(({ name }) => !state.catchingUp.has(name))];
    // With no destination, one entry tells that there are new ones: the cursor then moves to the log's end, past
    // entries that are neither read nor parsed.
    const count = live.length === 0 ? 1 : Math.max(1, Math.min(batch, Math.floor(maxJobsPerCall / live.length)));
    const reply =
      waitMs > 0
        ? await waiter.xread('COUNT', count, 'BLOCK', waitMs, 'STREAMS', logKey, state.cursor)
        : await waiter.xread('COUNT', count, 'STREAMS', logKey, state.cursor);
    const raw: RawEntries = reply?.[0]?.[1] ?? [];
    let lastId = raw.at(-1)?.[0];
    if (lastId === undefined) return { fresh: false };
    const growing = trend.note(Date.now(), logIdMs(raw[0]![0]));
    if (live.length === 0) lastId = (await waiter.xrevrange(logKey, '+', '-', 'COUNT', 1))[0]?.[0] ?? lastId;
    // Destinations without row filters read change events' heads: the rows are most of an event, and the jobs carry its data as stored.
    const read = live.length === 0 ? [] : readsHeads(live) ? parseLogHeads(raw, skipped) : parseLogEntries(raw, skipped);
    const { entries, taken } = await matchEntries(connection, prefix, read, live);
    const outcome = await script.handOver({
      field: 'cursor',
      expected: state.cursor,
      next: lastId,
      version: state.version,
      entries,
      taken,
    });
    if (outcome === 'done') {
      state.cursor = lastId;
      options.onHandOver?.(read.length);
    }
    return { fresh: true, full: live.length > 0 && raw.length === count, growing, outcome, none: live.length === 0 };
  };

  /** One run of the log for a subscription reading it from an earlier time, up to the cursor, where it joins the others. */
  const catchUp = async (state: FanoutState, name: string, next: string): Promise<HandOver | undefined> => {
    const destination = (await destinationsOf(state.version)).find((candidate) => candidate.name === name);
    if (destination === undefined) return undefined;
    const count = Math.max(1, Math.min(batch, maxJobsPerCall));
    const read = await readEventLog(connection, logKey, { start: next, end: state.cursor, count }, skipped);
    const complete = read.read < count;
    const after = complete ? state.cursor : read.lastId!;
    // Its `after` (the log's end when it was made) bounds what it gets with the others, not what it reads back.
    const { entries, taken } = await matchEntries(connection, prefix, read.entries, [destination], { readingBack: true });
    return script.handOver({
      field: `${CATCHUP}${name}`,
      expected: next,
      next: `(${after}`,
      version: state.version,
      entries,
      taken,
      ...(complete ? { joinAt: state.cursor } : {}),
    });
  };

  /**
   * At most once per `trimIntervalMs`: trims what every destination and reader has and the retention no longer keeps; and, when
   * nothing new came (`idle`), applies the backlog caps, which otherwise apply as events are handed over, so that an
   * age cap holds without traffic too.
   */
  const tidy = async (state: FanoutState, idle: boolean): Promise<void> => {
    const now = Date.now();
    if (now - lastTrimMs < trimIntervalMs) return;
    lastTrimMs = now;
    const held = [
      state.cursor,
      ...[...state.catchingUp.values()].map((next) => next.replace(/^\(/, '')),
      ...(await readerPositions(connection, logKey, readers)),
    ];
    const keepFromMs = Math.min(now - options.retentionMs, ...held.map(logIdMs));
    await connection.xtrim(logKey, 'MINID', `${keepFromMs}-0`);
    if (!idle) return;
    const capped = (await destinationsOf(state.version)).filter(
      ({ name, backlog }) => backlog !== undefined && !state.catchingUp.has(name),
    );
    if (capped.length === 0) return;
    const taken = new Map(capped.map((destination) => [destination, []]));
    await script.handOver({ field: 'cursor', expected: state.cursor, next: state.cursor, version: state.version, entries: [], taken });
  };

  /** Takes or renews the lease when a third of it has passed: true while this receiver holds it. */
  const holdLease = async (): Promise<boolean> => {
    const now = Date.now();
    if (now < renewAt) return true;
    const held = await lease.hold();
    renewAt = held ? now + leaseMs / 3 : 0;
    return held;
  };

  /**
   * One turn: the new entries (waited for while there is nothing else to do), the catch-ups, the tidying. The state
   * is kept from turn to turn while this receiver's hand-overs move it, and read again when one finds it moved or
   * changed (another receiver, a subscription made or deleted), after a catch-up, and whenever no entry came.
   */
  const turn = async (): Promise<void> => {
    if (!(await holdLease())) {
      state = undefined;
      await sleep(leaseMs / 2, undefined, { signal: stopping.signal }).catch(() => undefined);
      return;
    }
    const current = (state ??= await readState());
    if (await ackYield?.shouldYield(current.cursor, behind)) {
      options.onYield?.();
      await sleep(YIELD_MS, undefined, { signal: stopping.signal }).catch(() => undefined);
      return;
    }
    const catchingUp = [...current.catchingUp];
    const waitMs = Math.min(250, leaseMs / 2);
    const { fresh, full, growing, outcome, none } = await handNew(current, catchingUp.length > 0 ? 0 : waitMs);
    behind = full === true && growing === true;
    if (!fresh || (outcome !== undefined && outcome !== 'done') || catchingUp.length > 0) state = undefined;
    for (const [name, next] of catchingUp) await catchUp(current, name, next);
    await tidy(current, !fresh);
    // With no destination to hand anything (stream lanes read the log themselves), the cursor only bounds the trim:
    // moved as seldom as the log is waited on, not after every few entries.
    const linger = none === true ? waitMs : lingerMs;
    if (fresh && !full && catchingUp.length === 0) await sleep(linger, undefined, { signal: stopping.signal }).catch(() => undefined);
  };

  const loop = (async () => {
    while (!closed) {
      await turn().catch(async (err: unknown) => {
        if (closed) return;
        log.warn({ err }, 'fan-out: retrying');
        await sleep(250, undefined, { signal: stopping.signal }).catch(() => undefined);
      });
    }
    await lease.release().catch(() => undefined);
  })();
  log.debug({ routes: routes.map(({ name }) => name) }, 'fanning events out');
  return {
    async close() {
      closed = true;
      stopping.abort();
      // Its wait for new entries ends at once; a turn waiting for a Redis that is away ends when the caller
      // disconnects, so the wait here is bounded.
      waiter.disconnect();
      const bound = new AbortController();
      await Promise.race([loop, sleep(leaseMs, undefined, { signal: bound.signal }).catch(() => undefined)]);
      bound.abort();
      await script.close();
    },
  };
}
