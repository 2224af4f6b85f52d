import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import { longJobOptions } from '../queue/long-jobs.js';
import type { ChangeSource } from './change-event.js';
import type { ClaimedRange, ScopeRange } from './range-claims.js';

/** A resolve job's data: a scope's range, and how many of its change events are written already. */
export interface ResolveJobData {
  hook: string;
  scope: string;
  serviceUrl: string;
  from: number;
  to: number;
  /** Events of the range already written: a retry goes on after them. */
  written?: number;
  /**
   * How the range reached geohook, recorded when it was claimed; `replay` when `geohook changes replay` asked for it
   * again. Absent on a job queued before origins were recorded: `webhook`.
   */
  origin?: ChangeSource['origin'];
}

/** A job of the `change-ranges` queue, as `queue.add` takes it. */
export interface RangeJob {
  name: string;
  data: ResolveJobData;
  opts: JobsOptions & { jobId: string };
}

/** The id of a range's resolve job: one job per range, however many receivers claim it. */
const jobIdOf = ({ scope, from, to }: ScopeRange): string =>
  `resolve-${createHash('sha1').update(`${scope}\n${from}\n${to}`).digest('hex')}`;

/** The job that resolves a claimed range (the queue's options: a long job). */
export function resolveJob(range: ClaimedRange & { hook: string; serviceUrl: string }): RangeJob {
  const { scope, from, to, hook, serviceUrl, origin } = range;
  return { name: 'resolve', data: { hook, scope, serviceUrl, from, to, origin }, opts: { jobId: jobIdOf(range) } };
}

/** The job that resolves `range` again (`geohook changes replay`): its events keep their ids. */
export function replayJob(range: ScopeRange & { hook: string; serviceUrl: string }): RangeJob {
  const { scope, from, to, hook, serviceUrl } = range;
  const jobId = `replay-${jobIdOf(range).slice('resolve-'.length)}-${Date.now().toString(36)}`;
  return { name: 'resolve', data: { hook, scope, serviceUrl, from, to, origin: 'replay' }, opts: { ...longJobOptions, jobId } };
}
