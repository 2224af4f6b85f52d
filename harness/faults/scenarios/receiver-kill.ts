import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultRow } from '../fault-row.js';
import { startLoad } from '../load.js';
import { summarizeLoad, since, type ScenarioOptions } from '../scenario.js';
import { auditStack, startStack, withStack } from '../stack.js';

/** How long the receiver stays dead before it is started again. */
const DOWN_MS = 1000;

/**
 * Fault 1: the receiver is SIGKILLed a third of the way into the load, with deliveries in flight, and
 * started again on the same port and Redis a second later. Deliveries it did not acknowledge are the
 * senders' to retry; every acknowledged one was a job already. Zero loss and zero duplicates expected.
 */
export async function runReceiverKill(options: ScenarioOptions): Promise<FaultRow> {
  return withStack(await startStack('receiver-kill', 'fast'), options.keepDirs, async (stack) => {
    const { ratePerSecond, concurrency, loadSeconds, log } = options;
    const load = startLoad({
      url: stack.receiver.url,
      tag: stack.fault,
      count: Math.round(ratePerSecond * loadSeconds),
      ratePerSecond,
      concurrency,
    });
    const loadStart = load.startedAtMs;
    await sleep((loadSeconds * 1000) / 3);
    await stack.receiver.kill();
    const killedAtMs = since(loadStart);
    log(`receiver-kill: receiver SIGKILLed at ${killedAtMs} ms (${load.sent()} deliveries started)`);
    await sleep(DOWN_MS);
    await stack.receiver.start();
    const downMs = since(loadStart) - killedAtMs;
    log(`receiver-kill: serving again after ${downMs} ms`);
    const summary = summarizeLoad(await load.done);
    return auditStack(stack, {
      ...summary,
      zeroLossExpected: true,
      notes: [...summary.notes, `receiver down ${(downMs / 1000).toFixed(1)} s`],
    });
  });
}
