import type { GeohookEvent } from '../../src/events/envelope.js';
import type { TestEmulator } from './emulator.js';

/** The emulator's change-tracked feature service the backfill tests edit. */
export const PARCELS = 'Hosted/Parcels.FeatureServer';

/**
 * Makes an edit of Parcels in the emulator; `lose`: the server keeps it (extractChanges returns it) but no
 * delivery leaves. Resolves to the edit's server generation.
 */
export async function editParcels(emulator: TestEmulator, changeType = 'FeaturesCreated', lose = false): Promise<number> {
  const answer = await emulator.control(`services/${PARCELS}/edits`, { changeType, lose });
  if (answer.status !== 200) throw new Error(`edit ${changeType}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body.serverGens as [number, number])[1];
}

/** How many events' ranges `(from, to]` hold generation `gen`. */
export const coverage = (events: readonly Pick<GeohookEvent, 'changes'>[], gen: number): number =>
  events.filter(({ changes }) => changes !== undefined && changes.serverGens[0] < gen && gen <= changes.serverGens[1]).length;
