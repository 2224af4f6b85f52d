import { formatServiceName } from '../arcgis/service-name.js';
import type { LayerInfo } from '../arcgis-request/layer-info.js';
import type { RedisClient } from '../redis/connection.js';
import { layerFieldsKey } from '../redis/keys.js';
import type { ChangeEvent } from './change-event.js';

/** What a `where` filter reads of a layer: its fields with their ArcGIS types. */
export type LayerFields = readonly { name: string; type: string }[];

/** The field of a layer in the layer-fields hash: `<folder>/<name>.FeatureServer#<layer id>`. */
export const layerFieldsField = (event: Pick<ChangeEvent, 'service' | 'layer'>): string =>
  `${formatServiceName(event.service.folderName, event.service.serviceName, 'FeatureServer')}#${event.layer.id}`;

/**
 * Records the fields of the layers whose change events are written, for the fan-out's `where` filters (which run
 * where no layer definition is read): each layer once per process, and again when its fields change.
 */
export class LayerFieldsRecorder {
  readonly #connection: RedisClient;
  readonly #key: string;
  readonly #recorded = new Map<string, string>();

  constructor(connection: RedisClient, prefix: string) {
    this.#connection = connection;
    this.#key = layerFieldsKey(prefix);
  }

  async record(events: readonly ChangeEvent[], layers: readonly LayerInfo[]): Promise<void> {
    const fresh: string[] = [];
    // Each layer's fields as JSON, once per call (a batch holds many events of few layers).
    const jsonOf = new Map<LayerInfo, string>();
    for (const event of events) {
      const layer = layers.find(({ id }) => id === event.layer.id);
      if (layer === undefined) continue;
      const field = layerFieldsField(event);
      let json = jsonOf.get(layer);
      if (json === undefined) {
        json = JSON.stringify(layer.fields.map(({ name, type }) => ({ name, type })));
        jsonOf.set(layer, json);
      }
      if (this.#recorded.get(field) === json) continue;
      this.#recorded.set(field, json);
      fresh.push(field, json);
    }
    if (fresh.length > 0) await this.#connection.hset(this.#key, ...fresh);
  }
}
