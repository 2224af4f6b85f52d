import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultRow } from '../fault-row.js';
import { killHoldingInboxEntries } from '../inbox-pending.js';
import { startLoad } from '../load.js';
import { summarizeLoad, since, type ScenarioOptions } from '../scenario.js';
import { auditStack, startStack, withStack } from '../stack.js';

/** How long the receiver stays dead before it is started again. */
const DOWN_MS = 1000;
/** Longest wait for the mover to hold read-but-unmoved entries before the kill. */
const HUNT_MS = 3000;

/**
 * Fault 1: the receiver is SIGKILLed a third of the way into the load, at a moment its inbox mover holds
 * read-but-unmoved entries (when one comes within 3 s), and started again on the same port and Redis a
 * second later. The entries the dead mover had read are taken over by the new one after 10 s. Zero loss
 * and zero duplicates expected.
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
    const orphans = await killHoldingInboxEntries(stack.receiver, stack.redis.url, stack.prefix, HUNT_MS);
    const killedAtMs = since(loadStart);
    log(
      `receiver-kill: receiver SIGKILLed at ${killedAtMs} ms (${load.sent()} deliveries started, ${orphans} inbox entries read and not moved)`,
    );
    await sleep(DOWN_MS);
    await stack.receiver.start();
    const downMs = since(loadStart) - killedAtMs;
    log(`receiver-kill: serving again after ${downMs} ms`);
    const summary = summarizeLoad(await load.done);
    return auditStack(stack, {
      ...summary,
      zeroLossExpected: true,
      notes: [...summary.notes, `receiver down ${(downMs / 1000).toFixed(1)} s`, `killed holding ${orphans} unmoved inbox entries`],
      extra: { orphaned: orphans },
    });
  });
}
