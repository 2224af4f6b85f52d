import { layerFieldsField } from '../changes/layer-fields.js';
import type { RedisClient } from '../redis/connection.js';
import { layerFieldsKey } from '../redis/keys.js';
import type { LogEntry } from './event-log.js';
import type { RelayLayer } from './route-match.js';
import { isChangeEvent } from './routed-event.js';

/** The fields of the layers of the change events among `entries` (what `where` filters read), by layer field name. */
export async function readEventLayers(
  connection: RedisClient,
  prefix: string,
  entries: readonly LogEntry[],
): Promise<Map<string, RelayLayer>> {
  const fields = [...new Set(entries.flatMap(({ event }) => (isChangeEvent(event) ? [layerFieldsField(event)] : [])))];
  if (fields.length === 0) return new Map();
  const values = await connection.hmget(layerFieldsKey(prefix), ...fields);
  return new Map(
    fields.flatMap((field, index) => {
      const value = values[index];
      return value == null ? [] : [[field, { id: Number(field.slice(field.lastIndexOf('#') + 1)), fields: JSON.parse(value) }] as const];
    }),
  );
}

/** The layers of an event for a route's matcher: its layer's fields when known. */
export function eventLayersOf(layers: ReadonlyMap<string, RelayLayer>, entry: LogEntry): RelayLayer[] | undefined {
  const layer = isChangeEvent(entry.event) ? layers.get(layerFieldsField(entry.event)) : undefined;
  return layer === undefined ? undefined : [layer];
}
