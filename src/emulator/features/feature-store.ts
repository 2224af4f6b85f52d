import type { CatalogService } from '../types.js';
import { FeatureLayer } from './feature-layer.js';
import { genericLayers } from './layer-schemas.js';
import type { LayerDefinition } from './types.js';

/** A layer's entry of `changeTrackingInfo.layerServerGens`. */
export interface LayerServerGen {
  id: number;
  minServerGen: number;
  serverGen: number;
}

/** The layers of one feature service, with their features. */
export class ServiceFeatures {
  readonly #layers = new Map<number, FeatureLayer>();

  constructor(definitions: readonly LayerDefinition[]) {
    for (const definition of definitions) this.addLayer(definition);
  }

  /** Its layers and tables, in the order of their ids. */
  get layers(): FeatureLayer[] {
    return [...this.#layers.values()].sort((a, b) => a.id - b.id);
  }

  layer(id: number): FeatureLayer | undefined {
    return this.#layers.get(id);
  }

  /** Adds a layer (a copy of `definition`, which the store then owns and changes). */
  addLayer(definition: LayerDefinition): FeatureLayer {
    const layer = new FeatureLayer(structuredClone(definition));
    this.#layers.set(layer.id, layer);
    return layer;
  }

  /** The generation of the service's newest change, if it has one. */
  get serverGen(): number | undefined {
    let newest: number | undefined;
    for (const layer of this.#layers.values()) if (layer.serverGen !== undefined) newest = Math.max(newest ?? 0, layer.serverGen);
    return newest;
  }
}

/**
 * Every feature service's layers and features, created when first used from the catalogue's layer definitions
 * (a service without any gets one point layer), and the server generation counter the whole emulator shares,
 * Enterprise and Online alike.
 */
export class FeatureStore {
  readonly #services = new Map<string, ServiceFeatures>();
  #lastWhen = Number.NEGATIVE_INFINITY;
  /** The generation its history starts at: the emulator keeps no data between runs, its changes begin here. */
  readonly #startGen = Date.now();

  /** The layers of `service`, whose key is `key` (`folder/name.FeatureServer`). */
  of(key: string, service: CatalogService): ServiceFeatures {
    let features = this.#services.get(key);
    if (features === undefined) {
      features = new ServiceFeatures(service.layers ?? genericLayers(service.serviceName));
      this.#services.set(key, features);
    }
    return features;
  }

  /**
   * A new server generation for a change made at `now`: its time `when` is strictly after the previous change's,
   * and its generation is `when + 1`, so a range from the generation before it to its own selects it alone.
   */
  nextGeneration(now: number): { when: number; serverGen: number } {
    const when = Math.max(now, this.#lastWhen + 1);
    this.#lastWhen = when;
    return { when, serverGen: when + 1 };
  }

  /**
   * A layer's `layerServerGens` entry at `now`: `serverGen` is its newest change's generation; a layer never changed
   * reports its service's newest, and in a service never changed one no later change can have (`now`, or the last
   * change's time). `minServerGen` is the oldest generation a range can start at and be answered in full: the
   * store's start (a generation of an earlier run of the emulator is before its history), or the newest change its
   * log forgot.
   */
  layerServerGen(service: ServiceFeatures, layer: FeatureLayer, now: number): LayerServerGen {
    const serverGen = layer.serverGen ?? service.serverGen ?? Math.max(now, this.#lastWhen);
    const minServerGen = Math.min(layer.log.forgottenUpTo ?? this.#startGen, serverGen);
    return { id: layer.id, minServerGen, serverGen };
  }
}
