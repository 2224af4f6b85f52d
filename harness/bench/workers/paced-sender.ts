import { Pool } from 'undici';
import { notifyParent, serveParent } from '../ipc.js';
import { BodyPool, SIGNATURE_HEADER } from '../payloads.js';

/**
 * Signed deliveries POSTed at a steady pace, in a process of its own, each one timed to its 202: what the latency
 * of the subscriptions is measured from. Started with the number of bodies to sign beforehand as its argument.
 */

/** One paced run. */
export interface PaceParams {
  url: string;
  /** The first delivery (of the body pool) of this run. */
  from: number;
  count: number;
  perSec: number;
}

export interface PaceResult {
  /** Per 202: the event id geohook answered and when the answer was read (epoch ms). */
  acks: [id: string, atMs: number][];
  non2xx: number;
  errors: number;
  /** What the pace fell behind at worst (ms late to send a batch): above a few ms, the sender is too busy. */
  maxLateMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const pool = new BodyPool(Number(process.argv[2] ?? 1000));
/** Deliveries sent together: every 10 ms at 1,000/s. */
const BATCH = 10;

async function pace(params: PaceParams): Promise<PaceResult> {
  const url = new URL(params.url);
  const client = new Pool(url.origin, { connections: 32, pipelining: 1 });
  const result: PaceResult = { acks: [], non2xx: 0, errors: 0, maxLateMs: 0 };
  const post = async (index: number): Promise<void> => {
    const { body, signature } = pool.delivery(index, true);
    try {
      const response = await client.request({
        method: 'POST',
        path: url.pathname,
        headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature },
        body,
      });
      const answer = (await response.body.json()) as { id?: string };
      const atMs = Date.now();
      if (response.statusCode === 202 && typeof answer.id === 'string') result.acks.push([answer.id, atMs]);
      else result.non2xx += 1;
    } catch {
      result.errors += 1;
    }
  };
  const intervalMs = (1000 * BATCH) / params.perSec;
  const startedAtMs = Date.now();
  const inFlight: Promise<void>[] = [];
  try {
    for (let n = 0; n < params.count; n += BATCH) {
      const dueMs = startedAtMs + (n / BATCH) * intervalMs;
      const waitMs = dueMs - Date.now();
      if (waitMs > 0) await sleep(waitMs);
      else result.maxLateMs = Math.max(result.maxLateMs, -waitMs);
      for (let i = n; i < Math.min(params.count, n + BATCH); i += 1) inFlight.push(post(params.from + i));
    }
    await Promise.all(inFlight);
  } finally {
    await client.close();
  }
  return result;
}

serveParent({ pace, close: () => ({}) });
notifyParent('ready', { poolSize: pool.size });
