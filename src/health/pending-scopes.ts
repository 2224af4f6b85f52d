import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';

/** The states of a job that is still to run or running. */
const PENDING_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/** The scopes of the backfill queue's pending jobs, read incrementally (see {@link createPendingScopes}). */
export interface PendingScopes {
  /** The scope of every job pending now (gap and confirm jobs); a job's data is read the first time its id is seen. */
  read(): Promise<Set<string>>;
}

/**
 * Lists the pending job ids of `queue()` (one range script per call) and reads each job's `scope` (on `redis`, the
 * queue's Redis) only the first
 * time its id is seen: an id's job is always about the same scope (`gap-<sha1 of scope and range>`,
 * `confirm-<sha1 of scope>`). Ids no longer pending are forgotten. So a call costs one command plus one per job
 * new since the last, however many jobs wait.
 */
export function createPendingScopes(queue: () => Queue, redis: RedisClient): PendingScopes {
  const scopes = new Map<string, string | undefined>();
  return {
    async read() {
      const backfill = queue();
      const ids = new Set(await backfill.getRanges([...PENDING_STATES], 0, -1));
      for (const id of scopes.keys()) if (!ids.has(id)) scopes.delete(id);
      const fresh = [...ids].filter((id) => !scopes.has(id));
      if (fresh.length > 0) {
        const pipeline = redis.pipeline();
        for (const id of fresh) pipeline.hget(backfill.toKey(id), 'data');
        const answers = (await pipeline.exec()) ?? [];
        fresh.forEach((id, index) => {
          const data = answers[index]?.[1];
          // A job removed since it was listed is not pending: read again should its id come back.
          if (typeof data === 'string') scopes.set(id, scopeOfData(data));
        });
      }
      return new Set([...scopes.values()].filter((scope): scope is string => scope !== undefined));
    },
  };
}

/** The `scope` of a job's stored data; undefined when it has none. */
function scopeOfData(data: string): string | undefined {
  try {
    const scope = (JSON.parse(data) as { scope?: unknown } | null)?.scope;
    return typeof scope === 'string' ? scope : undefined;
  } catch {
    return undefined;
  }
}
