import { join } from 'node:path';
import { keepTempDir, makeTempDir, removeTempDir } from '../cleanup.js';
import { waitUntilMoved, readStoredJobs, judge, type StoredJob, type Verdict } from './audit.js';
import { FAULTS_SECRET } from './deliveries.js';
import { FaultRedis, type Durability } from './fault-redis.js';
import type { FaultName, FaultRow } from './fault-row.js';
import { ReceiverProcess } from './receiver-process.js';

/** A scenario's world: a fresh redis-server, one receiver process on it, a directory for both. */
export interface Stack {
  fault: FaultName;
  durability: Durability;
  dir: string;
  redis: FaultRedis;
  receiver: ReceiverProcess;
  prefix: string;
  spoolDir: string | undefined;
  logFile: string;
}

/**
 * Starts a redis-server (AOF, `durability`) and a receiver on it, with a spool when asked and `env` added
 * to the receiver's environment.
 */
export async function startStack(
  fault: FaultName,
  durability: Durability,
  options: { spool?: boolean; env?: Readonly<Record<string, string>> } = {},
): Promise<Stack> {
  const dir = makeTempDir(`faults-${fault}-${durability}`);
  const redis = await FaultRedis.start(dir, durability);
  const spoolDir = options.spool === true ? join(dir, 'spool') : undefined;
  const logFile = join(dir, 'receiver.log');
  const prefix = `faults-${fault}`;
  const receiver = new ReceiverProcess({
    redisUrl: redis.url,
    prefix,
    secret: FAULTS_SECRET,
    durability,
    logFile,
    ...(spoolDir === undefined ? {} : { spoolDir }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  await receiver.start();
  return { fault, durability, dir, redis, receiver, prefix, spoolDir, logFile };
}

/** What a scenario hands to {@link auditStack}: the deliveries it made and how each was answered. */
export interface AuditInput {
  deliveries: readonly { eventId: string; acknowledged: boolean }[];
  zeroLossExpected: boolean;
  notes: string[];
  problems: string[];
  /** Fields of the row only some faults have. */
  extra?: Pick<FaultRow, 'spooled' | 'gaveUp' | 'retried'>;
  /** Maps the jobs read from Redis before judging (the emulator's deliveries are matched by signature). */
  onJobs?: (jobs: readonly StoredJob[]) => void;
}

/**
 * Waits until the spool is moved into jobs, reads every job, and judges the deliveries
 * against them: the row of the scenario. Its problems are the broken promises: a lost acknowledged event
 * where none may be lost, any duplicate, a job of no delivery, a spool that never emptied.
 */
export async function auditStack(stack: Stack, input: AuditInput): Promise<FaultRow> {
  const moved = await waitUntilMoved(stack.spoolDir);
  const jobs = await readStoredJobs(stack.redis.url, stack.prefix);
  input.onJobs?.(jobs);
  const verdict: Verdict = judge(input.deliveries, jobs);
  const problems = [...input.problems];
  if (!moved.drained)
    problems.push(`not everything became a job within ${Math.round(moved.waitedMs / 1000)} s: ${moved.spoolFiles} spool files left`);
  if (verdict.lost > 0 && input.zeroLossExpected) problems.push(`${verdict.lost} acknowledged deliveries have no job in Redis`);
  if (verdict.duplicated > 0) problems.push(`${verdict.duplicated} deliveries have more than one job`);
  if (verdict.strangers > 0) problems.push(`${verdict.strangers} jobs belong to no delivery`);
  const notes = [...input.notes];
  if (verdict.storedUnacknowledged > 0) notes.push(`${verdict.storedUnacknowledged} stored without a 2xx`);
  notes.push(`moved ${(moved.waitedMs / 1000).toFixed(1)} s after the load`);
  return {
    fault: stack.fault,
    durability: stack.durability,
    sent: verdict.sent,
    acknowledged: verdict.acknowledged,
    found: verdict.found,
    lost: verdict.lost,
    duplicated: verdict.duplicated,
    zeroLossExpected: input.zeroLossExpected,
    ...input.extra,
    notes: notes.join('; '),
    problems,
  };
}

/**
 * Runs `work` on `stack`, then stops the receiver (gracefully) and Redis. The directory is removed, or
 * kept (with the receiver's log) when `work` failed, its row has problems, or `keepDirs` says so.
 */
export async function withStack(stack: Stack, keepDirs: boolean, work: (stack: Stack) => Promise<FaultRow>): Promise<FaultRow> {
  let row: FaultRow | undefined;
  try {
    row = await work(stack);
    if (row.problems.length > 0) row.problems.push(`kept ${stack.dir} (receiver.log, redis/, spool/)`);
    return row;
  } catch (err) {
    throw new Error(`${(err as Error).message} (kept ${stack.dir}: receiver.log, redis/, spool/)`, { cause: err });
  } finally {
    await stack.receiver.stop();
    await stack.redis.close();
    if (keepDirs || row === undefined || row.problems.length > 0) keepTempDir(stack.dir);
    else removeTempDir(stack.dir);
  }
}
