import { setTimeout as sleep } from 'node:timers/promises';
import { bulkAdd, emulatorAdminEnv } from '../../emulator-control.js';
import { ChangeEventsProbe, firstWritten, judgeChangeEvents, waitUntilResolved } from '../change-events.js';
import { listenEmulator } from '../fault-emulator.js';
import type { Durability } from '../fault-redis.js';
import type { FaultRow } from '../fault-row.js';
import { since, type ScenarioOptions } from '../scenario.js';
import { startStack, withStack, type Stack } from '../stack.js';

/** The emulator's change-tracked feature service, and the layer the features are added to. */
const PARCELS = 'Hosted/Parcels.FeatureServer';
export const LAYER_ID = 0;
/** How long the killed process stays dead before it is started again. */
const DOWN_MS = 1000;
/** The longest wait, after the restart, for every range to be resolved (a killed resolver's lock lapses in 10 to 15 s). */
const RESOLVE_TIMEOUT_MS = 90_000;

/** What each change-event fault kills, and how it comes back. */
const targets = {
  receiver: {
    fault: 'changes-resolver-kill',
    victim: 'geohook serve',
    kill: (stack: Stack) => stack.receiver.kill(),
    restart: (stack: Stack) => stack.receiver.start(),
  },
  redis: {
    fault: 'changes-redis-kill',
    victim: 'redis-server',
    kill: (stack: Stack) => stack.redis.kill(),
    restart: (stack: Stack) => stack.redis.restart(),
  },
} as const;

/** The receiver's variables: the emulator's admin API, `default` registered on Parcels, change events followed. */
export function changesEnv(emulatorUrl: string): Record<string, string> {
  return {
    ...emulatorAdminEnv(emulatorUrl),
    REGISTER: PARCELS,
    CHANGES: PARCELS,
    // The kept log then shows each range resolved and the events it added.
    LOG_LEVEL: 'info',
  };
}

/** Adds `count` features to Parcels in one generation (the emulator's `bulk`); throws unless a delivery was fired. */
export async function addFeatures(emulatorUrl: string, count: number): Promise<number> {
  const answer = await bulkAdd(emulatorUrl, PARCELS, count, LAYER_ID);
  if (answer.deliveries.length === 0) throw new Error('the bulk fired no delivery: the receiver is not registered on Parcels');
  return answer.count;
}

/**
 * Faults 5 and 6: a receiver follows Parcels' change events (CHANGES, registered with the emulator in this
 * process); `adds` features are added in one generation, and once its first change events are written the
 * receiver (`receiver`) or redis-server (`redis`; on strict, AOF fsync'd at every write) is SIGKILLed
 * mid-resolution and started again a second later (the receiver reconnects by itself). Once no range is
 * resolving, `change-events` must hold one `change.created` per feature: zero lost, zero duplicated.
 */
export async function runChangesKill(options: ScenarioOptions, target: keyof typeof targets, durability: Durability): Promise<FaultRow> {
  const { fault, victim, kill, restart } = targets[target];
  const { log, adds } = options;
  const { app: emulator, url } = await listenEmulator();
  try {
    return await withStack(await startStack(fault, durability, { env: changesEnv(url) }), options.keepDirs, async (stack) => {
      const probe = new ChangeEventsProbe(stack.redis.url, stack.prefix);
      try {
        const startMs = performance.now();
        const added = await addFeatures(url, adds);
        // Read at most 5 ms before the kill. What Redis holds right after it cannot be read before the receiver
        // writes again: it reconnects as soon as Redis is back.
        const writtenAtFault = await firstWritten(probe);
        await kill(stack);
        const killedAtMs = since(startMs);
        log(`${fault}: ${victim} SIGKILLed ${killedAtMs} ms after the bulk, ${writtenAtFault} of ${added} change events written`);
        await sleep(DOWN_MS);
        await restart(stack);
        const downMs = since(startMs) - killedAtMs;
        log(`${fault}: ${victim} started again after ${downMs} ms`);
        const { resolved, waitedMs } = await waitUntilResolved(probe, RESOLVE_TIMEOUT_MS);
        const verdict = await judgeChangeEvents(stack.redis.url, stack.prefix, LAYER_ID);
        const lost = Math.max(0, added - verdict.features);
        const problems: string[] = [];
        if (added !== adds) problems.push(`the emulator added ${added} features, not ${adds}`);
        if (writtenAtFault >= added) problems.push(`the kill came too late: all ${added} change events were written already`);
        if (!resolved) problems.push(`ranges still resolving ${Math.round(waitedMs / 1000)} s after the restart`);
        if (lost > 0) problems.push(`${lost} added features have no change event`);
        if (verdict.duplicated > 0) problems.push(`${verdict.duplicated} change events beyond one per feature`);
        if (verdict.strangers > 0) problems.push(`${verdict.strangers} change events are no create of a Parcels feature`);
        return {
          fault,
          durability,
          sent: adds,
          acknowledged: added,
          found: verdict.features,
          lost,
          duplicated: verdict.duplicated,
          zeroLossExpected: true,
          writtenAtFault,
          notes: [
            `${added} adds in one generation`,
            `${writtenAtFault} change events written just before the kill`,
            `${victim} down ${(downMs / 1000).toFixed(1)} s`,
            `resolved ${(waitedMs / 1000).toFixed(1)} s after the restart`,
            `${verdict.events} change events`,
          ].join('; '),
          problems,
        };
      } finally {
        await probe.close();
      }
    });
  } finally {
    await emulator.close();
  }
}
