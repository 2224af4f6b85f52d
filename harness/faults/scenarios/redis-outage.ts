import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultRow } from '../fault-row.js';
import { acknowledged, startLoad } from '../load.js';
import { summarizeLoad, since, type ScenarioOptions } from '../scenario.js';
import { auditStack, startStack, withStack } from '../stack.js';

/** Load before Redis stops and after it is back. */
const BEFORE_MS = 2000;
const AFTER_MS = 3000;

/** Events waiting in the spool: its lines. */
function spooledEvents(spoolDir: string): number {
  let lines = 0;
  for (const name of readdirSync(spoolDir).filter((file) => file.endsWith('.jsonl'))) {
    const text = readFileSync(join(spoolDir, name), 'utf8');
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines += 1;
  }
  return lines;
}

/**
 * Fault 3: redis-server is stopped (SIGTERM) 2 s into the load, stays down `outageSeconds` while the load
 * goes on, and is started again on the same port and files; the receiver is not restarted. Without a spool
 * the outage is answered 503 (with Retry-After); with `SPOOL_DIR` it is answered 202 from the spool, which
 * is drained into Redis once it is back. Zero loss and zero duplicates expected in both.
 */
export async function runRedisOutage(options: ScenarioOptions, spool: boolean): Promise<FaultRow> {
  const fault = spool ? 'redis-outage-spool' : 'redis-outage';
  return withStack(await startStack(fault, 'fast', { spool }), options.keepDirs, async (stack) => {
    const { ratePerSecond, concurrency, outageSeconds, log } = options;
    const seconds = (BEFORE_MS + AFTER_MS) / 1000 + outageSeconds;
    const load = startLoad({ url: stack.receiver.url, tag: fault, count: Math.round(ratePerSecond * seconds), ratePerSecond, concurrency });
    await sleep(BEFORE_MS);
    await stack.redis.stop();
    const stoppedAtMs = since(load.startedAtMs);
    log(`${fault}: redis-server stopped at ${stoppedAtMs} ms (${load.sent()} deliveries started); down for ${outageSeconds} s`);
    await sleep(outageSeconds * 1000);
    const spooled = stack.spoolDir === undefined ? undefined : spooledEvents(stack.spoolDir);
    await stack.redis.restart();
    const restartedAtMs = since(load.startedAtMs);
    log(`${fault}: redis-server started again at ${restartedAtMs} ms${spooled === undefined ? '' : ` (${spooled} events in the spool)`}`);
    const outcomes = await load.done;
    const summary = summarizeLoad(outcomes);
    const during = outcomes.filter((outcome) => outcome.sentAtMs >= stoppedAtMs && outcome.sentAtMs < restartedAtMs);
    const notes = [...summary.notes, `${during.filter(acknowledged).length} of ${during.length} sent during the outage acknowledged`];
    const firstAfter = Math.min(
      ...outcomes.filter((outcome) => acknowledged(outcome) && outcome.sentAtMs >= restartedAtMs).map((outcome) => outcome.sentAtMs),
    );
    if (Number.isFinite(firstAfter))
      notes.push(`first 2xx for a delivery sent ${((firstAfter - restartedAtMs) / 1000).toFixed(1)} s after Redis was back`);
    if (spooled !== undefined) notes.push(`${spooled} in the spool when Redis came back`);
    const missingRetryAfter = outcomes.filter((outcome) => outcome.status === 503 && outcome.retryAfter === undefined).length;
    const problems = [...summary.problems];
    if (missingRetryAfter > 0) problems.push(`${missingRetryAfter} 503 answers without Retry-After`);
    return auditStack(stack, {
      ...summary,
      notes,
      problems,
      zeroLossExpected: true,
      ...(spooled === undefined ? {} : { extra: { spooled } }),
    });
  });
}
