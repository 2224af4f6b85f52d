import type { SubmissionEvent } from '../../src/changes/submission-event.js';
import type { SubmissionAnswer } from '../emulator-control.js';

/** What the `change.submission` events in Redis say of the submissions made. */
export interface SubmissionVerdict {
  /** `change.submission` events in Redis. */
  events: number;
  /** Submissions made with exactly one `change.submission`. */
  found: number;
  /** Submissions made with none. */
  lost: number;
  /** `change.submission` events beyond one per submission. */
  duplicated: number;
  /** Submissions whose one event lacks a related row or photo, or has one of another submission. */
  incomplete: number;
  /** Of those, the ones closed by their Survey123 webhook (the others closed by their window). */
  incompleteBySurvey123: number;
  /** Related rows, and photos, missing from the events found. */
  missingRelated: number;
  missingPhotos: number;
  /** Photos and related rows in `deleted` that their submission's event lacks. */
  goneMissing: number;
  /** `change.submission` events of no submission made. */
  strangers: number;
  /** Of the events found, those closed by the Survey123 webhook. */
  closedBySurvey123: number;
}

/**
 * Judges the change events read from Redis against the submissions the emulator made: each must be exactly one
 * `change.submission` whose parent is the submission's, with every related row (by GlobalID) and every photo (by the
 * SHA-256 of the bytes uploaded) and nothing else. A photo or row in `deleted` (by SHA-256, by GlobalID: deleted while
 * geohook resolved its range) may be missing: found gone when geohook read its bytes, or the row no longer there when
 * a range was read again after a kill.
 */
export function judgeSubmissions(
  events: Iterable<unknown>,
  made: readonly SubmissionAnswer[],
  deleted: ReadonlySet<string> = new Set(),
): SubmissionVerdict {
  const byParent = new Map<string, SubmissionEvent[]>();
  let count = 0;
  for (const event of events) {
    const submission = event as Partial<SubmissionEvent>;
    if (submission.type !== 'change.submission') continue;
    count += 1;
    const parent = String(submission.key?.globalId);
    byParent.set(parent, [...(byParent.get(parent) ?? []), submission as SubmissionEvent]);
  }
  let found = 0;
  let duplicated = 0;
  let incomplete = 0;
  let closedBySurvey123 = 0;
  let incompleteBySurvey123 = 0;
  let missingRelated = 0;
  let missingPhotos = 0;
  let goneMissing = 0;
  for (const answer of made) {
    const written = byParent.get(answer.parent.globalId) ?? [];
    byParent.delete(answer.parent.globalId);
    duplicated += Math.max(0, written.length - 1);
    const [event] = written;
    if (event === undefined) continue;
    found += 1;
    if (event.closedBy === 'survey123') closedBySurvey123 += 1;
    const related = new Set(event.related.map((row) => String(row.key.globalId)));
    const photos = new Set(event.attachments.map((entry) => entry.sha256));
    const expectedRows = answer.related.filter((row) => !deleted.has(row.globalId) || related.has(row.globalId));
    const expectedPhotos = answer.attachments.filter((entry) => !deleted.has(entry.sha256) || photos.has(entry.sha256));
    const relatedMissing = expectedRows.filter((row) => !related.has(row.globalId)).length;
    const photosMissing = expectedPhotos.filter((entry) => !photos.has(entry.sha256)).length;
    missingRelated += relatedMissing;
    missingPhotos += photosMissing;
    goneMissing += answer.related.length - expectedRows.length + answer.attachments.length - expectedPhotos.length;
    const whole =
      relatedMissing === 0 && photosMissing === 0 && related.size === expectedRows.length && photos.size === expectedPhotos.length;
    if (!whole) {
      incomplete += 1;
      if (event.closedBy === 'survey123') incompleteBySurvey123 += 1;
    }
  }
  const strangers = [...byParent.values()].reduce((sum, list) => sum + list.length, 0);
  return {
    events: count,
    found,
    lost: made.length - found,
    duplicated,
    incomplete,
    incompleteBySurvey123,
    missingRelated,
    missingPhotos,
    goneMissing,
    strangers,
    closedBySurvey123,
  };
}
