import type { Job } from 'bullmq';

/**
 * The mark of a job put back by hand (`geohook events replay` or `retry`, `geohook relay replay`): the time it was put
 * back, kept in the job's progress beside the handlers that already ran (docs/events.md#replays). The job id and data
 * stay the same, so consumers that deduplicate by event id still do.
 */
interface ReplayProgress {
  replayedAt?: string;
  handled?: unknown[];
}

function progressOf(job: Job): ReplayProgress {
  const { progress } = job;
  return typeof progress === 'object' && progress !== null ? (progress as ReplayProgress) : {};
}

/** When the job was last put back by hand (ISO 8601), or undefined for one never replayed. */
export function replayedAtOf(job: Job): string | undefined {
  const { replayedAt } = progressOf(job);
  return typeof replayedAt === 'string' ? replayedAt : undefined;
}

/**
 * Marks a job as put back by hand now. `keepHandled`: the handlers that already ran are not run again (a retry of a
 * failed job); otherwise every handler runs again (a replay of a completed one).
 */
export async function markReplayed(job: Job, keepHandled: boolean, now = new Date()): Promise<void> {
  const { handled } = progressOf(job);
  await job.updateProgress({ replayedAt: now.toISOString(), ...(keepHandled && Array.isArray(handled) ? { handled } : {}) });
}

/** The progress of a job whose handlers `handled` ran, its replay mark kept. */
export function handledProgress(job: Job, handled: readonly string[]): object {
  const replayedAt = replayedAtOf(job);
  return { ...(replayedAt === undefined ? {} : { replayedAt }), handled: [...handled] };
}
