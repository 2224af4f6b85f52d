import { readServerGens } from '../arcgis-request/server-generations.js';
import { readStates } from './mirror-state.js';
import type { MirrorScope, SyncContext } from './sync-scope.js';

/**
 * The layers of a scope whose table is at a generation before the server's history (`minServerGen` of
 * `changeTrackingInfo.layerServerGens`): their changes since cannot be read, as after a restart of an emulator that
 * keeps no data, or a server that forgot its changes or had its service published again. Their tables are copied
 * again, never taken as equal to the layer.
 */
export async function layersBeforeHistory(context: SyncContext, scope: MirrorScope, layerIds: readonly number[]): Promise<number[]> {
  const states = await readStates(context.pool, context.schema, scope.service, layerIds);
  if (states.length === 0) return [];
  const gens = await readServerGens(context.session, scope.serviceUrl);
  return states
    .filter((state) => {
      const minServerGen = gens.find((gen) => gen.id === state.layer)?.minServerGen;
      return minServerGen !== undefined && state.serverGen < minServerGen;
    })
    .map((state) => state.layer);
}
