import { acknowledged, describeAnswers, type DeliveryOutcome } from './load.js';

/** What every scenario is run with. */
export interface ScenarioOptions {
  /** Deliveries per second of the load generator. */
  ratePerSecond: number;
  /** Requests in flight at most. */
  concurrency: number;
  /** Length of the load in the kill scenarios. */
  loadSeconds: number;
  /** How long Redis stays down in the outage scenarios. */
  outageSeconds: number;
  /** Features added in one generation in the change-event scenarios. */
  adds: number;
  /** Features added in one generation in the relay scenarios (each relayed to two routes). */
  relayAdds: number;
  /** Parcels mirrored into PostGIS before the edits of the mirror fault. */
  mirrorFeatures: number;
  /** Random adds, updates and deletes made across the mirror fault's kills, outage and PostgreSQL restart. */
  mirrorEdits: number;
  /** Survey123 submissions (a parcel, two inspections, four photos) made at 10 a second in the submissions fault. */
  submissions: number;
  /** Keep every scenario's directory (Redis files, spool, receiver log); else only those of broken rows. */
  keepDirs: boolean;
  /** Progress, to stderr. */
  log: (line: string) => void;
}

/** The deliveries of a load as the audit wants them, the answers as a note, and what the answers broke. */
export function summarizeLoad(outcomes: readonly DeliveryOutcome[]): {
  deliveries: { eventId: string; acknowledged: boolean }[];
  notes: string[];
  problems: string[];
} {
  const wrongIds = outcomes.filter((outcome) => acknowledged(outcome) && outcome.answeredId !== outcome.eventId).length;
  return {
    deliveries: outcomes.map((outcome) => ({ eventId: outcome.eventId, acknowledged: acknowledged(outcome) })),
    notes: [describeAnswers(outcomes)],
    problems: wrongIds > 0 ? [`${wrongIds} 2xx answers did not carry the body's SHA-256 as their id`] : [],
  };
}

/** Milliseconds since `startMs` (a `performance.now()` reading), rounded. */
export function since(startMs: number): number {
  return Math.round(performance.now() - startMs);
}
