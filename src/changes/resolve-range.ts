import { createHash } from 'node:crypto';
import { parseServiceName } from '../arcgis/service-name.js';
import { readChanges } from '../arcgis-request/extract-changes.js';
import type { ServiceSession } from '../arcgis-request/service-session.js';
import { parseScope } from '../events/tracked-ranges.js';
import { changesPreviousKey } from '../redis/keys.js';
import { buildChangeEvents, type TrackedFields } from './build-change-events.js';
import type { ChangeEvent, ChangeSource } from './change-event.js';
import { readServiceLayers } from './layer-info.js';
import { parseExactJson } from './parse-exact-json.js';
import type { PreviousValues, PreviousValuesStore, PreviousValuesWrite } from './previous-values.js';
import { readCurrentRows } from './read-current-rows.js';

/** A range to resolve: a scope's generations in `(from, to]`, at its service. */
export interface RangeToResolve {
  hook: string;
  scope: string;
  serviceUrl: URL;
  from: number;
  to: number;
}

/** What resolving a range needs besides the range. */
export interface ResolveContext {
  session: ServiceSession;
  previous: PreviousValuesStore;
  prefix: string;
  track: TrackedFields;
  origin: ChangeSource['origin'];
  /** The ArcGIS Online organization, when the service is one of its. */
  orgId?: string;
  /** The layers followed; every one when undefined. */
  layers?: readonly number[];
  /** Each layer's field names as last resolved, by layer scope (`<scope>#<layer>`); none for a layer never resolved. */
  knownSchemas: (layerScopes: string[]) => Promise<(string[] | undefined)[]>;
}

/** A range's change events in order, and the previous values and field names to write once they are written. */
export interface ResolvedRange {
  events: ChangeEvent[];
  writes: { key: string; writes: PreviousValuesWrite[] }[];
  /** Each layer's field names as now read, by the layer's previous-values scope (`<scope>#<layer>`). */
  schemas: Map<string, string[]>;
  /** A server that answers ids only is read up to now: the generation it was read to, where the next range starts. */
  readUpTo?: number;
}

/** A layer's own scope: the scope's on ArcGIS Online (one layer), else `<scope>#<layer>`. */
export const layerScopeOf = (scope: string, layerId: number): string =>
  parseScope(scope).layerId === undefined ? `${scope}#${layerId}` : scope;

/** The key of a layer's previous values. */
const previousKeyOf = (prefix: string, scope: string, layerId: number): string => changesPreviousKey(prefix, layerScopeOf(scope, layerId));

/**
 * Resolves one range (docs/changes.md#how-it-works): reads the service's layers, asks `extractChanges` for every
 * change in the range (every list, the scope's layers, asynchronously), BigInteger values read exactly, then turns
 * the rows into change events with the previous values kept of them. A server whose `extractChanges` answers ids
 * only gives the ids, and the rows are read with `query`: the current state, flagged `asOf: 'current'`.
 */
export async function resolveRange(range: RangeToResolve, context: ResolveContext): Promise<ResolvedRange> {
  const { service, layerId } = parseScope(range.scope);
  const { layers, returnsRows } = await readServiceLayers(context.session, range.serviceUrl);
  const ids = layerId === undefined ? layers.map((layer) => layer.id).filter((id) => context.layers?.includes(id) ?? true) : [layerId];
  const url = new URL(`${range.serviceUrl.href.replace(/\/+$/, '')}/extractChanges`);
  url.search = new URLSearchParams({
    serverGens: `[${range.from},${range.to}]`,
    layers: `[${ids.join(',')}]`,
    returnInserts: 'true',
    returnUpdates: 'true',
    returnDeletes: 'true',
    returnAttachments: 'false',
    async: 'true',
  }).toString();
  const scopedLayers = layers.filter((layer) => ids.includes(layer.id));
  const read = returnsRows
    ? { edits: (await readChanges(context.session, url, parseExactJson)).edits, readUpTo: undefined }
    : await readCurrentRows(context.session, range.serviceUrl, scopedLayers, range.from);
  const { edits } = read;
  const previous = new Map<number, Map<number | string, PreviousValues>>();
  for (const edit of edits) {
    const asked = [
      ...edit.features.updates.map(
        (feature) => feature.attributes[layers.find((layer) => layer.id === edit.id)?.objectIdField ?? 'objectid'],
      ),
      ...edit.features.deleteIds,
    ].filter((id): id is number | string => typeof id === 'number' || typeof id === 'string');
    previous.set(edit.id, await context.previous.read(previousKeyOf(context.prefix, range.scope, edit.id), asked));
  }
  const scoped = scopedLayers;
  const current = scoped.map((layer) => layer.fields.map((field) => field.name).sort());
  const known = await context.knownSchemas(scoped.map((layer) => layerScopeOf(range.scope, layer.id)));
  const schemaChanges = scoped.flatMap((layer, index) => {
    const before = known[index];
    const now = current[index]!;
    if (before === undefined || before.join(',') === now.join(',')) return [];
    return [
      { layerId: layer.id, added: now.filter((name) => !before.includes(name)), removed: before.filter((name) => !now.includes(name)) },
    ];
  });
  const { folder, name } = parseServiceName(service);
  const { events, writes } = buildChangeEvents({
    hook: range.hook,
    serviceName: service,
    service: {
      ...(folder === undefined ? {} : { folderName: folder }),
      serviceName: name,
      serviceType: 'FeatureServer',
      url: range.serviceUrl.href,
      ...(context.orgId === undefined ? {} : { orgId: context.orgId }),
    },
    serverGens: [range.from, range.to],
    origin: context.origin,
    transactionId: createHash('sha256').update(`${range.scope}\n${range.from}\n${range.to}`).digest('hex'),
    layers: new Map(layers.map((layer) => [layer.id, layer])),
    edits,
    ...(returnsRows ? {} : { asOf: 'current' as const }),
    previous,
    track: context.track,
    now: new Date(),
    schemaChanges,
  });
  return {
    events,
    writes: [...writes].map(([id, list]) => ({ key: previousKeyOf(context.prefix, range.scope, id), writes: list })),
    schemas: new Map(scoped.map((layer, index) => [layerScopeOf(range.scope, layer.id), current[index]!])),
    ...(read.readUpTo === undefined ? {} : { readUpTo: read.readUpTo }),
  };
}
