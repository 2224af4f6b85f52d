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
] as const;
export type FaultName = (typeof faultNames)[number];

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
  /** Deliveries with at least one job in Redis; `changes-*`: features with a change event. */
  found: number;
  /** Acknowledged deliveries with no job; `changes-*`: added features with no change event. */
  lost: number;
  /** Deliveries with more than one job; `changes-*`: change events beyond one per feature. */
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
  /** Change events written just before the kill (`changes-*`): above 0 and below `sent` when it struck mid-resolution. */
  writtenAtFault?: number;
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
