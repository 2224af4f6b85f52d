import type { RedisClient } from '../redis/connection.js';
import { compareLogIds } from './log-id.js';

/**
 * A destination that reads the event log itself, through a Redis consumer group of its own (a stream lane,
 * docs/streams.md#order): the fan-out hands it nothing, makes its group at the fan-out's cursor (what came before
 * was handed on already) and keeps every entry it has not finished.
 */
export interface LogReader {
  /** Its name in logs: `relay:<route>`. */
  readonly name: string;
  /** Its consumer group on the event log. */
  readonly group: string;
}

/** `XGROUP CREATE`'s answer when the group is there already. */
const BUSY_GROUP = /^BUSYGROUP/;

/**
 * Makes the groups of `readers` that are not there yet, each starting after `cursor` (the fan-out's, before it moves
 * past entries it no longer hands them): a reader's events from there on are read through its group. A group there
 * already is left where it is.
 */
export async function makeReaderGroups(
  connection: RedisClient,
  logKey: string,
  readers: readonly LogReader[],
  cursor: string,
): Promise<void> {
  for (const { group } of readers) {
    await connection.xgroup('CREATE', logKey, group, cursor, 'MKSTREAM').catch((err: unknown) => {
      if (!(err instanceof Error && BUSY_GROUP.test(err.message))) throw err;
    });
  }
}

/** A consumer group of the log as `XINFO GROUPS` tells it. */
interface GroupInfo {
  name: string;
  /** Entries read and not acknowledged. */
  pending: number;
  lastDeliveredId: string;
  /** Entries not read yet; null when Redis cannot tell. */
  lag: number | null;
}

/** The consumer groups of the log `logKey`: none when there is no log (nothing stored since they were made, and it was deleted). */
async function groupsOf(connection: RedisClient, logKey: string): Promise<GroupInfo[]> {
  const groups = (await connection.xinfo('GROUPS', logKey).catch(() => [])) as unknown[][];
  return groups.map((fields) => {
    // Name, value, name, value…: names at even places only (a value may read like a name).
    const field = (name: string): unknown => fields[fields.findIndex((value, at) => at % 2 === 0 && value === name) + 1];
    const lag = field('lag');
    return {
      name: String(field('name')),
      pending: Number(field('pending')),
      lastDeliveredId: String(field('last-delivered-id')),
      lag: lag === null || lag === undefined ? null : Number(lag),
    };
  });
}

/**
 * Where each reader of `readers` whose group exists stands: the first entry it read and did not finish, else the
 * last it read. The log is trimmed only before the earliest.
 */
export async function readerPositions(connection: RedisClient, logKey: string, readers: readonly LogReader[]): Promise<string[]> {
  if (readers.length === 0) return [];
  const wanted = new Set(readers.map(({ group }) => group));
  const positions: string[] = [];
  for (const { name, pending, lastDeliveredId } of await groupsOf(connection, logKey)) {
    if (!wanted.has(name)) continue;
    let position = lastDeliveredId;
    if (pending > 0) {
      const [first] = (await connection.xpending(logKey, name, '-', '+', 1)) as [string, ...unknown[]][];
      if (first !== undefined && compareLogIds(first[0], position) < 0) position = first[0];
    }
    positions.push(position);
  }
  return positions;
}

/**
 * How many entries of the log a reader's group holds back: those it read and did not finish, and those it has not
 * read yet (Redis's `lag`; when Redis cannot tell it, until the group read on, the log's length bounds it). 0 when
 * the group is not made yet.
 */
export async function laneBacklog(connection: RedisClient, logKey: string, group: string): Promise<number> {
  const found = (await groupsOf(connection, logKey)).find(({ name }) => name === group);
  if (found === undefined) return 0;
  return found.pending + (found.lag ?? (await connection.xlen(logKey)));
}
