import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RedisServer } from '../../src/embedded/redis-server.js';
import { makeTempDir, onCleanup, removeTempDir } from '../cleanup.js';

export type Durability = 'fast' | 'strict';

/** A private redis-server for one case or scenario. */
export interface BenchRedis {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/**
 * A fresh redis-server on a free port with AOF on: `fast` fsyncs every second (`everysec`), `strict` at
 * every write (`always`). Its directory is temporary; `stop` removes it.
 */
export async function startRedis(durability: Durability): Promise<BenchRedis> {
  const dir = makeTempDir('bench-redis');
  const server = new RedisServer({ dir, appendOnly: true, appendFsync: durability === 'strict' ? 'always' : 'everysec' });
  const stop = async (): Promise<void> => {
    unregister();
    await server.stop();
    removeTempDir(dir);
  };
  const unregister = onCleanup(stop);
  await server.start();
  return { url: server.url, pid: server.pid, stop };
}

/** Job states a job can be in; `pending` ones are not consumed yet. */
const pendingStates = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;
const allStates = [...pendingStates, 'completed', 'failed'] as const;

export interface JobCounts {
  /** Jobs in any state. */
  total: number;
  /** Jobs not consumed yet. */
  pending: number;
  failed: number;
}

/** Counts the jobs of BullMQ queues `names` under `prefix`, through BullMQ itself. */
export async function countJobs(url: string, prefix: string, names: readonly string[]): Promise<JobCounts> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  try {
    const counts = await Promise.all(
      names.map(async (name) => {
        const queue = new Queue(name, { connection, prefix });
        try {
          return await queue.getJobCounts(...allStates);
        } finally {
          await queue.close();
        }
      }),
    );
    const sum = (states: readonly string[]): number =>
      counts.reduce((total, byState) => total + states.reduce((n, state) => n + (byState[state] ?? 0), 0), 0);
    return { total: sum(allStates), pending: sum(pendingStates), failed: sum(['failed']) };
  } finally {
    await connection.quit().catch(() => connection.disconnect());
  }
}

/**
 * Polls until the queues hold as many jobs as `expected()` says (a receiver may still be storing the
 * requests in flight when the load stopped) or `timeoutMs` passes; returns both figures of the last poll.
 */
export async function settleJobs(
  url: string,
  prefix: string,
  names: readonly string[],
  expected: () => Promise<number>,
  timeoutMs = 20_000,
  intervalMs = 200,
): Promise<{ expected: number; jobs: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const want = await expected();
    const { total } = await countJobs(url, prefix, names);
    if (total === want || Date.now() > deadline) return { expected: want, jobs: total };
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** CPU time (user + system) of another process, in ms; undefined where /proc is not available. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticksPerSecond = 100;
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return undefined;
  }
}
