import type { ServiceSession } from './service-session.js';

/** A layer's current server generation, as its feature service reports it. */
export interface LayerGen {
  id: number;
  serverGen: number;
  /** The oldest generation the server can give the changes since (its history's start); none when not reported. */
  minServerGen?: number;
}

const isLayerGen = (value: unknown): value is LayerGen =>
  Number.isSafeInteger((value as LayerGen | null)?.id) && Number.isSafeInteger((value as LayerGen | null)?.serverGen);

/** The layers' current generations of the feature service at `serviceUrl` (`changeTrackingInfo.layerServerGens`); none without change tracking. */
export async function readServerGens(session: ServiceSession, serviceUrl: URL): Promise<LayerGen[]> {
  const resource = await session.read(serviceUrl);
  const info = resource.changeTrackingInfo as { layerServerGens?: unknown } | undefined;
  if (!Array.isArray(info?.layerServerGens)) return [];
  return info.layerServerGens.filter(isLayerGen).map(({ id, serverGen, minServerGen }) => ({
    id,
    serverGen,
    ...(Number.isSafeInteger(minServerGen) ? { minServerGen } : {}),
  }));
}

/**
 * The generation a scope is at: its layer's, for an ArcGIS Online scope (its deliveries name their layer), else
 * the highest of the service's (ArcGIS Enterprise's cover every layer); undefined when there is none.
 */
export function scopeGeneration(layers: readonly LayerGen[], layerId: number | undefined): number | undefined {
  if (layerId !== undefined) return layers.find((layer) => layer.id === layerId)?.serverGen;
  return layers.length === 0 ? undefined : Math.max(...layers.map((layer) => layer.serverGen));
}
