import { setTimeout as sleep } from 'node:timers/promises';
import type { Durability } from '../fault-redis.js';
import type { FaultRow } from '../fault-row.js';
import { acknowledged, startLoad, type DeliveryOutcome } from '../load.js';
import { summarizeLoad, since, type ScenarioOptions } from '../scenario.js';
import { auditStack, startStack, withStack } from '../stack.js';

/** How long Redis stays dead before it is started again. */
const DOWN_MS = 1000;

/** For a fast-mode loss: how long before the kill the lost deliveries were acknowledged. */
function describeLoss(outcomes: readonly DeliveryOutcome[], stored: ReadonlySet<string>, killedAtMs: number): string | undefined {
  const lost = outcomes.filter((outcome) => acknowledged(outcome) && !stored.has(outcome.eventId));
  if (lost.length === 0) return undefined;
  const earliest = Math.min(...lost.map((outcome) => outcome.answeredAtMs ?? killedAtMs));
  return `lost acknowledgements were answered at most ${killedAtMs - earliest} ms before the kill`;
}

/**
 * Fault 2: redis-server is SIGKILLed a third of the way into the load and started again a second later on
 * the same port and files; the receiver stays up and reconnects. `strict` (appendfsync always): zero loss
 * expected. `fast` (appendfsync everysec): up to about a second of acknowledged writes may be lost; the
 * row reports it. Zero duplicates expected in both.
 */
export async function runRedisKill(options: ScenarioOptions, durability: Durability): Promise<FaultRow> {
  return withStack(await startStack('redis-kill', durability), options.keepDirs, async (stack) => {
    const { ratePerSecond, concurrency, loadSeconds, log } = options;
    const load = startLoad({
      url: stack.receiver.url,
      tag: `redis-kill-${durability}`,
      count: Math.round(ratePerSecond * loadSeconds),
      ratePerSecond,
      concurrency,
    });
    const loadStart = load.startedAtMs;
    await sleep((loadSeconds * 1000) / 3);
    await stack.redis.kill();
    const killedAtMs = since(loadStart);
    log(`redis-kill (${durability}): redis-server SIGKILLed at ${killedAtMs} ms (${load.sent()} deliveries started)`);
    await sleep(DOWN_MS);
    await stack.redis.restart();
    const downMs = since(loadStart) - killedAtMs;
    log(`redis-kill (${durability}): redis-server started again after ${downMs} ms`);
    const outcomes = await load.done;
    const summary = summarizeLoad(outcomes);
    const notes = [...summary.notes, `Redis down ${(downMs / 1000).toFixed(1)} s`];
    return auditStack(stack, {
      ...summary,
      notes,
      zeroLossExpected: durability === 'strict',
      onJobs: (jobs) => {
        const loss = describeLoss(outcomes, new Set(jobs.map((job) => job.eventId ?? '')), killedAtMs);
        if (loss !== undefined) notes.push(loss);
      },
    });
  });
}
