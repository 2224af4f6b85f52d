import type { Durability } from './fault-redis.js';

/** The fault of each scenario, as named in the table and the JSON rows. */
export const faultNames = [
  'receiver-kill',
  'redis-kill',
  'redis-outage',
  'redis-outage-spool',
  'emulator-retry',
  'changes-resolver-kill',
  'changes-redis-kill',
  'relay-kill',
  'relay-sink-outage',
  'mirror-kill',
  'submissions-kill',
  'subscriptions',
  'stream-nats-kill',
  'stream-nats-restart',
  'stream-amqp-kill',
  'stream-amqp-restart',
] as const;
export type FaultName = (typeof faultNames)[number];

/** What one subscription's queue held at the end of the `subscriptions` fault, by event id. */
export interface SubscriptionCount {
  /** The subscription's name (its queue is `sub-<name>`). */
  name: string;
  /** Acknowledged deliveries it takes (its filter matches them). */
  takes: number;
  /** Of those, the ones its queue holds. */
  found: number;
  /** Acknowledged deliveries it takes that its queue lacks. */
  lost: number;
  /** Deliveries its queue holds more than once, or that a consumer of it was handed more than once. */
  duplicated: number;
  /** Jobs in its queue of no delivery it takes (another filter's events, or no delivery's). */
  strangers: number;
  /** Distinct events a consumer (`subscribe({subscription})`) was handed afterwards. */
  consumed: number;
}

/**
 * One row of the report: one fault on one durability setting. The change-event faults (`changes-*`) count
 * edits and change events where the others count deliveries and jobs.
 */
export interface FaultRow {
  fault: FaultName;
  durability: Durability;
  /** Deliveries made (by the load generator, or by the emulator); `changes-*`: features added. */
  sent: number;
  /** Deliveries answered 2xx (the emulator's: reported `delivered`); `changes-*`: adds the emulator applied. */
  acknowledged: number;
  /**
   * Deliveries with at least one job in Redis; `changes-*`: features with a change event; `subscriptions`: with a job
   * in their family's queue and in every subscription's queue that takes them.
   */
  found: number;
  /**
   * Acknowledged deliveries with no job; `changes-*`: added features with no change event; `subscriptions`: missing
   * from their family's queue or from a subscription's queue that takes them.
   */
  lost: number;
  /** Deliveries with more than one job (`subscriptions`: in any one queue); `changes-*`: change events beyond one per feature. */
  duplicated: number;
  /** False where losing acknowledged events is expected (fast durability, Redis killed): reported, not a failure. */
  zeroLossExpected: boolean;
  /** Events in the spool when Redis came back (redis-outage-spool). */
  spooled?: number;
  /** Deliveries the emulator gave up on (emulator-retry). */
  gaveUp?: number;
  /** Deliveries the emulator had to try more than once (emulator-retry). */
  retried?: number;
  /** Requests a relay route took beyond one per event (`relay-*`): at-least-once repeats, deduplicated by `webhook-id`. */
  relayRepeats?: number;
  /**
   * Change events written just before the kill (`changes-*`): above 0 and below `sent` when it struck mid-resolution;
   * `stream-*`: events the broker's consumer had read.
   */
  writtenAtFault?: number;
  /** Per subscription, what its queue held (`subscriptions`). */
  subscriptions?: SubscriptionCount[];
  /** How the fault went: answers by status, timings. */
  notes: string;
  /** Broken promises and anything that makes the row unreliable; empty when all is well. */
  problems: string[];
}

/**
 * Rows of text with each column padded to its widest cell; numeric columns (every cell below the header a
 * number) right-aligned, header included.
 */
function alignedTable(rows: readonly (readonly string[])[]): string[] {
  const [header = [], ...body] = rows;
  const columns = header.map((_, column) => ({
    width: Math.max(...rows.map((row) => row[column]!.length)),
    right: body.length > 0 && body.every((row) => /^\d+$/.test(row[column]!)),
  }));
  return rows.map((row) =>
    row
      .map((cell, column) => (columns[column]!.right ? cell.padStart(columns[column]!.width) : cell.padEnd(columns[column]!.width)))
      .join(' | ')
      .trimEnd(),
  );
}

/** The report as a text table, then one line per problem. */
export function formatRows(rows: readonly FaultRow[]): string {
  const table = alignedTable([
    ['fault', 'durability', 'sent', 'acknowledged', 'found in Redis', 'lost', 'duplicated', 'notes'],
    ...rows.map((row) => [
      row.fault,
      row.durability,
      String(row.sent),
      String(row.acknowledged),
      String(row.found),
      String(row.lost),
      String(row.duplicated),
      row.notes,
    ]),
  ]);
  const problems = rows.flatMap((row) => row.problems.map((problem) => `BROKEN ${row.fault} (${row.durability}): ${problem}`));
  return [...table, ...(problems.length > 0 ? ['', ...problems] : [])].join('\n');
}
