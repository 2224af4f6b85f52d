import { formatServiceName } from '../arcgis/service-name.js';
import { InvalidWhereError } from '../arcgis/where/where-error.js';
import { compileWhere, type WhereField } from '../arcgis/where/where.js';
import type { ChangeEvent } from '../changes/change-event.js';
import type { RouteFilterConfig } from '../config/route-filter.js';
import { serviceNameOf } from '../events/service-activity.js';
import { compilePattern } from './event-patterns.js';
import { isChangeEvent, type RoutedEvent } from './routed-event.js';

/** What a route's `where` reads of a layer: its id and fields (a change writer's `LayerInfo` is one). */
export interface RelayLayer {
  id: number;
  fields: readonly WhereField[];
}

/** Whether a route takes an event; `layers`: the fields of the event's layer, which its `where` needs. */
export type RouteMatcher = (event: RoutedEvent, layers?: readonly RelayLayer[]) => boolean;

/** The service a change event is of, `folder/name.FeatureServer`. */
const changeServiceOf = ({ service }: ChangeEvent): string | undefined =>
  formatServiceName(service.folderName, service.serviceName, service.serviceType);

/** The row a `where` is read on: `after`, or `before` for a delete (none when its previous row is unknown). */
const rowOf = (event: ChangeEvent): Record<string, unknown> | undefined => (event.op === 'd' ? event.before : event.after)?.attributes;

/**
 * A route's `where` as a test of a change event, compiled once per layer (by its fields): a layer without a
 * field the clause names never matches, and neither does an event whose layer is not given.
 */
function whereTest(clause: string): (event: ChangeEvent, layers: readonly RelayLayer[] | undefined) => boolean {
  const compiled = new WeakMap<readonly WhereField[], ((row: Record<string, unknown>) => boolean) | null>();
  const testOf = (layer: RelayLayer): ((row: Record<string, unknown>) => boolean) | null => {
    if (!compiled.has(layer.fields)) {
      try {
        compiled.set(layer.fields, compileWhere(clause, layer.fields));
      } catch (err) {
        if (!(err instanceof InvalidWhereError)) throw err;
        compiled.set(layer.fields, null);
      }
    }
    return compiled.get(layer.fields)!;
  };
  return (event, layers) => {
    const row = rowOf(event);
    const layer = layers?.find(({ id }) => id === event.layer.id);
    const test = layer === undefined ? null : testOf(layer);
    return row !== undefined && test !== null && test(row);
  };
}

/**
 * The matcher of a route or subscription (docs/relays.md#routes): its type patterns, then its services and layers,
 * then, for change events, its `where` and `changed`. A feature or GP event carries no row: a filter with `where`
 * or `changed` takes none.
 */
export function routeMatcher(route: RouteFilterConfig): RouteMatcher {
  const patterns = route.types.map(compilePattern);
  const services = route.services === undefined ? undefined : new Set(route.services);
  const where = route.where === undefined ? undefined : whereTest(route.where);
  const changed = route.changed === undefined ? undefined : new Set(route.changed);
  return (event, layers) => {
    if (!patterns.some((pattern) => pattern.matches(event.type))) return false;
    const service = isChangeEvent(event) ? changeServiceOf(event) : serviceNameOf(event);
    if (services !== undefined && (service === undefined || !services.has(service))) return false;
    const layerId = isChangeEvent(event) ? event.layer.id : event.changes?.layerId;
    if (route.layers !== undefined && (layerId === undefined || !route.layers.includes(layerId))) return false;
    if (where === undefined && changed === undefined) return true;
    if (!isChangeEvent(event)) return false;
    if (changed !== undefined && !(event.op === 'u' && (event.changedFields ?? []).some((field) => changed.has(field)))) return false;
    return where === undefined || where(event, layers);
  };
}
