import type { JobsOptions } from 'bullmq';
import type { RouteMatcher } from './route-match.js';

/** A backlog cap: past it the oldest waiting jobs are dropped, and counted. */
export interface BacklogCap {
  /** Most jobs waiting (0: no cap). */
  readonly count: number;
  /** Longest a job waits, ms (0: no cap). */
  readonly ageMs: number;
}

/**
 * Where the fan-out hands events: a BullMQ queue and what it takes. A relay route (its queue `relay-<name>`, read by
 * its delivery worker) and a subscription (`sub-<name>`, read by the application's workers) are the two kinds; a
 * stream output is one more, with a worker of its own.
 */
export interface Destination {
  /** Its name in counts and logs: `relay:<route>`, `sub:<subscription>`. */
  readonly name: string;
  /** The queue its jobs go to (job id the event's, job name its type). */
  readonly queue: string;
  readonly matches: RouteMatcher;
  /** The options of its jobs: attempts, backoff, what is kept. */
  readonly jobOptions: JobsOptions;
  /** Only log entries after this id (a subscription: the log's last entry when it was made). */
  readonly after?: string;
  readonly backlog?: BacklogCap;
}
