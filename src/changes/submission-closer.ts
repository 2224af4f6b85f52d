import type { Logger } from 'pino';
import { startPollLoop, type PollLoop } from '../retry/poll-loop.js';
import { normalizeGuid } from './attachment-changes.js';
import type { ChangeWriter } from './change-writer.js';
import type { ParentReader } from './read-parent-row.js';
import { buildSubmissionEvent } from './submission-event.js';
import type { SubmissionStore } from './submission-store.js';

/** Options of {@link startSubmissionCloser}. */
export interface SubmissionCloserOptions {
  store: SubmissionStore;
  writer: () => ChangeWriter;
  /** Reads the row of a parent kept as a reference (its other parts came after it). */
  readParent: ParentReader;
  log: Logger;
  /** How often the due submissions are looked for, ms. @defaultValue 100 */
  intervalMs?: number;
  /** How long a claimed submission is this receiver's before another may close it, ms. @defaultValue 30000 */
  leaseMs?: number;
}

/** Submissions closed per claim. */
const CLAIMED_AT_ONCE = 100;

/**
 * Closes the submissions that are due (docs/submissions.md): each claimed (leased), its parts read, its
 * `change.submission` written with the accept script (its id is the parent's, so a second receiver, a retry or a
 * replay adds nothing), then finished. A parent that came alone and was not closed by Survey123 is no submission; one
 * kept as a reference has its row read from the service.
 */
export function startSubmissionCloser(options: SubmissionCloserOptions): PollLoop {
  const { store, log } = options;
  const leaseMs = options.leaseMs ?? 30_000;
  const check = async (): Promise<void> => {
    for (;;) {
      const claimed = await store.claim(Date.now(), leaseMs, CLAIMED_AT_ONCE);
      for (const submission of claimed) {
        const parts = await store.read(submission);
        const parent = parts.parent ?? (parts.parentRef === undefined ? undefined : await options.readParent(parts.parentRef));
        const whole = parent !== undefined && (parts.survey123 || parts.related.length > 0 || parts.attachments.length > 0);
        if (whole) {
          const event = buildSubmissionEvent(parent, parts.related, parts.attachments, parts.survey123 ? 'survey123' : 'window');
          const added = await options.writer().writeSubmission(event);
          if (added)
            log.debug({ eventId: event.id, related: event.related.length, attachments: event.attachments.length }, 'submission closed');
        }
        const hook = parent?.hook ?? parts.parentRef?.hook;
        const globalId = normalizeGuid(parent?.key.globalId ?? parts.parentRef?.globalId);
        await store.finish(submission, hook === undefined || globalId === undefined ? undefined : `${hook}\n${globalId}`);
      }
      if (claimed.length < CLAIMED_AT_ONCE) return;
    }
  };
  return startPollLoop({
    check,
    intervalMs: options.intervalMs ?? 100,
    failed: (err) => log.warn({ err }, 'submissions not closed: retrying'),
  });
}
