import { changesLocationOf, type ChangesLocation } from '../arcgis/changes-url.js';
import type { ServiceLocator } from '../arcgis/service-locator.js';
import { formatServiceName, isArcgisName } from '../arcgis/service-name.js';
import type { ServiceRef, StoredEvent } from './envelope.js';

/**
 * A range of server generations handed to consumers, and the watermark it advances (docs/backfill.md):
 * the edits of `scope` with `from < generation <= to`.
 */
export interface TrackedRange {
  /**
   * What the watermark is kept for: `<hook> <folder>/<name>.FeatureServer` (ArcGIS Enterprise, whose deliveries
   * cover every layer), with `#<layer id>` when the delivery names its layer (ArcGIS Online).
   */
  scope: string;
  from: number;
  to: number;
  /** The feature service's REST URL (`…/FeatureServer`), where `extractChanges` is: a trusted one (see `ServiceLocator`). */
  serviceUrl: string;
  /** `poll`: a gap this range leaves is reported as polled (`source: "poll"`), not as backfilled. */
  source?: 'poll';
}

/** The watermark's scope of a service (`folder/name.FeatureServer`) on a hook, of one layer when it is given. */
export const scopeOf = (hook: string, service: string, layerId?: number): string =>
  `${hook} ${service}${layerId === undefined ? '' : `#${layerId}`}`;

/** The service and, on ArcGIS Online, the layer of a scope {@link scopeOf} made (hook names have no space). */
export function parseScope(scope: string): { service: string; layerId?: number } {
  const [service = '', layer] = scope.slice(scope.indexOf(' ') + 1).split('#');
  return layer === undefined ? { service } : { service, layerId: Number(layer) };
}

function rangeOf(
  hook: string,
  service: Partial<Record<keyof ServiceRef, string | undefined>>,
  changes: ChangesLocation,
  locator: ServiceLocator,
): TrackedRange | undefined {
  const { folderName, serviceName } = service;
  if (
    (folderName !== undefined && folderName !== '' && !isArcgisName(folderName)) ||
    (serviceName !== undefined && !isArcgisName(serviceName))
  )
    return undefined;
  const name = formatServiceName(folderName, serviceName, 'FeatureServer');
  const serviceUrl = name === undefined ? undefined : locator.locate(hook, name, new URL(changes.url));
  if (name === undefined || serviceUrl === undefined) return undefined;
  return {
    scope: scopeOf(hook, name, changes.layerId),
    from: changes.serverGens[0],
    to: changes.serverGens[1],
    serviceUrl: serviceUrl.href,
  };
}

const textOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The ranges a feature delivery covers: one per payload item whose `changesUrl` names server generations (an
 * ArcGIS Online array has one item per layer edited) under a URL `locator` trusts. `classified` is the payload
 * as classification read it (a form's `payload` field). None for other events, when the payload names no
 * service, or when no signature vouches for it: a gap is filled by calling a server with geohook's token, which
 * neither an unsigned request nor an untrusted URL may choose.
 */
export function trackedRangesOf(event: StoredEvent, classified: unknown, locator: ServiceLocator): TrackedRange[] {
  if (event.family !== 'feature' || event.changes === undefined || !event.verified) return [];
  // `changes` decodes the first item: enough unless an ArcGIS Online array holds more.
  if (!Array.isArray(classified) || classified.length < 2)
    return [rangeOf(event.hook, event.service, event.changes, locator)].filter((range) => range !== undefined);
  return classified.flatMap((item: unknown) => {
    const changes = changesLocationOf(item);
    const { folderName, serviceName } = item as Record<string, unknown>;
    const service = { folderName: textOf(folderName), serviceName: textOf(serviceName) };
    return (changes && rangeOf(event.hook, service, changes, locator)) ?? [];
  });
}
