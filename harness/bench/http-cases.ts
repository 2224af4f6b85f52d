import { randomBytes } from 'node:crypto';
import { allQueueNames } from '../../src/queue/names.js';
import { NAIVE_QUEUE } from './cases/case-names.js';
import type { CaseParams, ServerStats } from './cases/case-server.js';
import { Child } from './ipc.js';
import { BENCH_SECRET, WEBHOOK_PATH } from './payloads.js';
import { countJobs, processCpuMs, settleJobs, startRedis, type BenchRedis, type Durability } from './redis.js';
import type { LoadParams, LoadResult } from './workers/loader.js';

export type CaseName = 'bare' | 'naive' | 'geohook' | 'geohook-strict';

/** How to run one HTTP case. */
interface CaseSpec {
  name: CaseName;
  /** The server's script, relative to the bench folder. */
  script: string;
  /** The BullMQ queues it fills; none means it needs no Redis. */
  queues: readonly string[];
  /** Its redis-server's durability whatever the run's `--durability`; none means the run's. */
  durability?: Durability;
}

/** The HTTP cases, in the order of their turns in each round. */
export const caseSpecs: readonly CaseSpec[] = [
  { name: 'bare', script: 'cases/bare.js', queues: [] },
  { name: 'naive', script: 'cases/naive.js', queues: [NAIVE_QUEUE] },
  { name: 'geohook', script: 'cases/geohook.js', queues: allQueueNames },
  { name: 'geohook-strict', script: 'cases/geohook.js', queues: allQueueNames, durability: 'strict' },
];

/** One case in one round. */
export interface RoundResult {
  round: number;
  case: CaseName;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Peak RSS of the server process, MiB. */
  rssMb: number;
  /** CPU over the measured window, % of one core. */
  serverCpuPct: number;
  loaderCpuPct: number;
  redisCpuPct?: number;
  /** 2xx replies the server decided on, warm-up included. */
  acked: number;
  /** 2xx answers the load generator received, warm-up included (fewer: it drops those in flight at its stop). */
  received2xx: number;
  /** Jobs found in Redis afterwards (cases with a queue). */
  jobs?: number;
  /**
   * Jobs created during the measured window and the drain after it, per second of window plus drain (for
   * bare Fastify, which makes none: its 2xx per second). What the receiver sustains, not what it answered.
   */
  sustainedRps: number;
  /** From the end of the load until every acknowledged event was a job, ms (0 without a queue). */
  drainMs: number;
  /** Bodies the loader had to sign during the load (the pool was too small). */
  signedOnTheFly: number;
}

export interface CaseRoundSettings {
  round: number;
  /** The run's durability, for the cases that do not set their own. */
  durability: Durability;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  /** Node options of the server process (`--cpu-prof`…). */
  execArgv?: string[];
}

/** A fresh BullMQ prefix, so that no run sees another's keys. */
export const freshPrefix = (label: string): string => `bench-${label}-${randomBytes(4).toString('hex')}`;

/**
 * Starts the server of a case on a fresh redis-server (when it needs one) and a fresh prefix. The Redis
 * has the case's own durability if it sets one, `durability` (the run's) otherwise.
 */
export async function startCaseServer(
  spec: CaseSpec,
  durability: Durability,
  execArgv: string[] = [],
): Promise<{ server: Child<{ port: number }>; redis?: BenchRedis; prefix: string }> {
  const redis = spec.queues.length > 0 ? await startRedis(spec.durability ?? durability) : undefined;
  const prefix = freshPrefix(spec.name);
  const params: CaseParams = { prefix, secret: BENCH_SECRET, ...(redis === undefined ? {} : { redisUrl: redis.url }) };
  try {
    const server = await Child.start<{ port: number }>(spec.name, spec.script, { args: [JSON.stringify(params)], execArgv });
    return { server, prefix, ...(redis === undefined ? {} : { redis }) };
  } catch (err) {
    await redis?.stop();
    throw err;
  }
}

/**
 * One case, one round: warm-up, measured load, the server's own figures, then (for the cases that
 * enqueue) the check that Redis holds exactly one job per 2xx the server answered.
 */
export async function runCaseRound(spec: CaseSpec, loader: Child, settings: CaseRoundSettings): Promise<RoundResult> {
  const { server, redis, prefix } = await startCaseServer(spec, settings.durability, settings.execArgv);
  try {
    const load = (params: Omit<LoadParams, 'url' | 'connections' | 'distinct'>): Promise<LoadResult> =>
      loader.call<LoadResult>(
        'run',
        {
          url: `http://127.0.0.1:${server.ready.port}${WEBHOOK_PATH}`,
          connections: settings.connections,
          distinct: spec.queues.length > 0,
          ...params,
        } satisfies LoadParams,
        60_000 + (params.durationSeconds ?? 0) * 2000,
      );
    await loader.call('reset');
    const warmup = settings.warmupSeconds > 0 ? await load({ durationSeconds: settings.warmupSeconds }) : undefined;
    const ackedOf = async (): Promise<number> => (await server.call<ServerStats>('stats')).acked;
    // The warm-up's events are jobs before the window opens, so that the window counts only its own.
    if (redis !== undefined) await settleJobs(redis.url, prefix, spec.queues, ackedOf);
    const jobsBefore = redis === undefined ? 0 : (await countJobs(redis.url, prefix, spec.queues)).total;
    const before = await server.call<ServerStats>('stats');
    const redisBefore = processCpuMs(redis?.pid);
    const result = await load({ durationSeconds: settings.durationSeconds });
    const after = await server.call<ServerStats>('stats');
    const redisAfter = processCpuMs(redis?.pid);
    const windowMs = result.finishedAtMs - result.startedAtMs;
    // The requests in flight when autocannon stopped are still answered: compare once they are.
    const settled =
      redis === undefined
        ? { expected: after.acked, jobs: undefined }
        : await settleJobs(redis.url, prefix, spec.queues, ackedOf, 20_000, 50);
    const drainMs = redis === undefined ? 0 : Math.max(0, Date.now() - result.finishedAtMs);
    const sustainedRps = settled.jobs === undefined ? result.rps : ((settled.jobs - jobsBefore) * 1000) / Math.max(1, windowMs + drainMs);
    return {
      round: settings.round,
      case: spec.name,
      rps: result.rps,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      rssMb: after.maxRssMb,
      serverCpuPct: ((after.cpuMs - before.cpuMs) / windowMs) * 100,
      loaderCpuPct: result.cpuPct,
      ...(redisBefore === undefined || redisAfter === undefined ? {} : { redisCpuPct: ((redisAfter - redisBefore) / windowMs) * 100 }),
      acked: settled.expected,
      received2xx: (warmup?.count2xx ?? 0) + result.count2xx,
      ...(settled.jobs === undefined ? {} : { jobs: settled.jobs }),
      sustainedRps,
      drainMs,
      signedOnTheFly: (warmup?.signedOnTheFly ?? 0) + result.signedOnTheFly,
    };
  } finally {
    await server.close();
    await redis?.stop();
  }
}
