import type { ChangesAnswer } from './features/extract-changes.js';
import type { FiredJob } from './types.js';

/** Records kept of each kind (GP jobs, extract jobs, stored results); the oldest are forgotten first. */
export const DEFAULT_HISTORY_SIZE = 10_000;

/** How long an `extractChanges` result stays on the storage path. @defaultValue 10 minutes */
export const RESULT_TTL_MS = 600_000;

/** An asynchronous `extractChanges` (`async=true`): its status URL answers once `InProgress`, then how it ended. */
export interface ExtractJob {
  id: string;
  /** The service's key, `folder/name.FeatureServer`. */
  service: string;
  submitted: number;
  /** Status requests answered so far. */
  polls: number;
  /** The answer, taken when the job was submitted; absent when it failed. */
  answer?: ChangesAnswer;
  /** Why it failed, as its status says. */
  failure?: string;
  /** Once completed: its result's id on the storage path. */
  resultId?: string;
}

function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}

/**
 * What the REST resources of the payloads point to: the GP jobs fired (`statusURL`), the asynchronous
 * `extractChanges` jobs and their results on the storage path. Bounded: the last `max` of each kind are kept.
 */
export class FiredHistory {
  readonly #max: number;
  readonly #jobs = new Map<string, FiredJob>();
  readonly #extracts = new Map<string, ExtractJob>();
  readonly #results = new Map<string, { answer: ChangesAnswer; expires: number }>();

  constructor(max = DEFAULT_HISTORY_SIZE) {
    this.#max = Math.max(1, max);
  }

  recordJob(job: FiredJob): void {
    remember(this.#jobs, job.jobId, job, this.#max);
  }

  job(jobId: string): FiredJob | undefined {
    return this.#jobs.get(jobId);
  }

  recordExtract(job: ExtractJob): void {
    remember(this.#extracts, job.id, job, this.#max);
  }

  extract(id: string): ExtractJob | undefined {
    return this.#extracts.get(id);
  }

  /** Puts a result on the storage path under `id` until `expires` (epoch ms). */
  storeResult(id: string, answer: ChangesAnswer, expires: number): void {
    remember(this.#results, id, { answer, expires }, this.#max);
  }

  /** The result stored under `id`, unless it expired by `now` (then it is forgotten). */
  result(id: string, now: number): ChangesAnswer | undefined {
    const stored = this.#results.get(id);
    if (stored !== undefined && stored.expires <= now) this.#results.delete(id);
    return stored === undefined || stored.expires <= now ? undefined : stored.answer;
  }
}
