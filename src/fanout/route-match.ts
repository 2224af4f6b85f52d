import { formatServiceName } from '../arcgis/service-name.js';
import type { WhereField } from '../arcgis/where/where.js';
import { changeTest } from '../changes/transition-filter.js';
import type { RouteFilterConfig } from '../config/route-filter.js';
import type { StoredEvent } from '../events/envelope.js';
import { serviceNameOf } from '../events/service-activity.js';
import { compilePattern } from './event-patterns.js';
import { filteredChange, isChangeEvent, isStoredEvent, type RoutedEvent, type RoutedHead } from './routed-event.js';

/** What a route's `where` reads of a layer: its id and fields (a change writer's `LayerInfo` is one). */
export interface RelayLayer {
  id: number;
  fields: readonly WhereField[];
}

/** A crossing of a route's `where` (docs/changes.md#transitions): the change event is handed on with this type. */
export type EmittedType = 'change.entered' | 'change.left';

/**
 * Whether a route takes an event: false, true, or the type it takes a crossing as (`emit`); `layers`: the fields of
 * the event's layer, which its `where` needs (`readsLayers`: read from Redis only for a matcher that says so). A
 * matcher without row filters has `head`: the same verdict from a change event's head (a reader that needs no rows
 * parses none); one with row filters has none.
 */
export type RouteMatcher = ((event: RoutedEvent, layers?: readonly RelayLayer[]) => boolean | EmittedType) & {
  readonly readsLayers: boolean;
  readonly head: ((event: RoutedHead) => boolean) | undefined;
};

/** The service a change event (or its head) is of, `folder/name.FeatureServer`. */
const changeServiceOf = ({ service }: Exclude<RoutedHead, StoredEvent>): string | undefined =>
  formatServiceName(service.folderName, service.serviceName, service.serviceType);

/**
 * The matcher of a route or subscription (docs/relays.md#routes): its services and layers, then for change events its
 * `changed`, `when` and `where`; with `emit`, a change that takes a feature into or out of the `where` is taken as
 * `change.entered` or `change.left`, and any other as its own type. The type patterns apply to the type taken. A
 * feature or GP event carries no row: a filter with `where`, `changed` or `when` takes none.
 */
export function routeMatcher(route: RouteFilterConfig): RouteMatcher {
  const patterns = route.types.map(compilePattern);
  const services = route.services === undefined ? undefined : new Set(route.services);
  const test = changeTest(route);
  const takes = (type: string): boolean => patterns.some((pattern) => pattern.matches(type));
  const rowFilters = route.where !== undefined || route.changed !== undefined || route.when !== undefined;
  /** Whether the event is of the route's services and layers (a submission's are its parent's). */
  const inScope = (event: RoutedHead): boolean => {
    const stored = isStoredEvent(event);
    const service = stored ? serviceNameOf(event) : changeServiceOf(event);
    if (services !== undefined && (service === undefined || !services.has(service))) return false;
    const layerId = stored ? event.changes?.layerId : event.layer.id;
    return route.layers === undefined || (layerId !== undefined && route.layers.includes(layerId));
  };
  const matcher = (routed: RoutedEvent, layers?: readonly RelayLayer[]): boolean | EmittedType => {
    if (!inScope(routed)) return false;
    if (!rowFilters) return takes(routed.type);
    if (!isChangeEvent(routed)) return false;
    const event = filteredChange(routed);
    const type = test(event, layers?.find(({ id }) => id === event.layer.id)?.fields);
    if (type === false) return false;
    // A submission is filtered as its parent, a create (which `emit` can only see enter where its `where` holds), and
    // taken as itself: it crosses nothing.
    const taken = routed.type === 'change.submission' ? routed.type : type;
    if (!takes(taken)) return false;
    return taken === 'change.entered' || taken === 'change.left' ? taken : true;
  };
  const head = rowFilters ? undefined : (event: RoutedHead): boolean => inScope(event) && takes(event.type);
  return Object.assign(matcher, { readsLayers: route.where !== undefined, head });
}
