import type { Child } from '../ipc.js';
import type { RelaySinkStats } from '../workers/relay-sink.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the sink holds `count` distinct events; resolves to its stats. */
export async function sinkHolds(sink: Child, count: number, timeoutMs: number): Promise<RelaySinkStats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await sink.call<RelaySinkStats>('stats');
    if (stats.distinct >= count) return stats;
    if (Date.now() > deadline) throw new Error(`relay: the sink holds ${stats.distinct} of ${count} events after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Milliseconds between the first and the last arrival at the sink (at least 1). */
export const spanMs = (stats: RelaySinkStats): number => Math.max(1, stats.lastAtMs! - stats.firstAtMs!);

/** Events per second between the first and the last arrival at the sink. */
export const rateOf = (stats: RelaySinkStats, count: number): number => (count * 1000) / spanMs(stats);
