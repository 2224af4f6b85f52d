import autocannon, { type RequestData } from 'autocannon';
import { notifyParent, serveParent } from '../ipc.js';
import { BodyPool, SIGNATURE_HEADER } from '../payloads.js';

/**
 * The load generator: autocannon in a process of its own, so it never shares an event loop with a server
 * under test. It lives for the whole bench, because making the body pool takes a moment.
 * Started with the pool size as its argument.
 */

/** One load run. */
export interface LoadParams {
  url: string;
  connections: number;
  /** Seconds to load for; ignored when `amount` is set. */
  durationSeconds?: number;
  /** Exactly this many requests, each one answered. */
  amount?: number;
  /** Every request body distinct (the cases that deduplicate); else the pool may repeat. */
  distinct: boolean;
}

export interface LoadResult {
  /** 2xx answers per second. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  count2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSeconds: number;
  /** Requests built since the last reset (an upper bound of those sent). */
  built: number;
  signedOnTheFly: number;
  startedAtMs: number;
  finishedAtMs: number;
  /** CPU of this process over the run, in % of one core. */
  cpuPct: number;
}

const pool = new BodyPool(Number(process.argv[2] ?? 100_000));
let next = 0;

async function run(params: LoadParams): Promise<LoadResult> {
  const path = new URL(params.url).pathname;
  const setupRequest = (request: RequestData): RequestData => {
    const { body, signature } = pool.delivery(next, params.distinct);
    next += 1;
    request.body = body;
    request.headers = { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature };
    return request;
  };
  const onTheFlyBefore = pool.signedOnTheFly;
  const builtBefore = next;
  const cpuBefore = process.cpuUsage();
  const startedAtMs = Date.now();
  const result = await autocannon({
    url: params.url,
    method: 'POST',
    connections: params.connections,
    pipelining: 1,
    timeout: 30,
    ...(params.amount === undefined ? { duration: params.durationSeconds ?? 10 } : { amount: params.amount }),
    // autocannon stops at a sample only: every 100 ms, so that a 0.5 s warm-up lasts 0.5 s, not 1 s.
    sampleInt: 100,
    requests: [{ method: 'POST', path, setupRequest }],
  });
  const finishedAtMs = Date.now();
  const cpu = process.cpuUsage(cpuBefore);
  return {
    rps: result['2xx'] / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    count2xx: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSeconds: result.duration,
    built: next - builtBefore,
    signedOnTheFly: pool.signedOnTheFly - onTheFlyBefore,
    startedAtMs,
    finishedAtMs,
    cpuPct: ((cpu.user + cpu.system) / 1000 / (finishedAtMs - startedAtMs)) * 100,
  };
}

serveParent({
  /** Starts again from delivery 0 (a fresh Redis has seen none). */
  reset: () => {
    next = 0;
    return {};
  },
  run,
  close: () => ({}),
});
notifyParent('ready', { poolSize: pool.size });
