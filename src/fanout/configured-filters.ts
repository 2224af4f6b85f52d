import { adminAuthFor } from '../arcgis/online-admin.js';
import { isTransitionFilter } from '../changes/change-filter.js';
import { readFollowedLayers, type FollowedLayers } from '../changes/followed-layers.js';
import type { GeohookConfig } from '../config/load-config.js';
import type { RouteFilterConfig } from '../config/route-filter.js';
import { REGISTERED_HOOK } from '../config/self-registration.js';
import { serviceLocatorOf } from '../config/service-locator.js';
import type { ChangesServiceSettings } from '../config/types.js';
import { GeohookError } from '../errors.js';
import { checkFilter, formatFilterIssue, type CheckedLayer, type FilterIssue } from './filter-check.js';

/** What checking the configuration's filters found: the mistakes, and the services whose definitions could not be read. */
export interface FiltersCheck {
  issues: FilterIssue[];
  unread: { service: string; error: Error }[];
  /** The services whose definitions were read. */
  read: string[];
}

/**
 * A `changes` service's transition filter as the filters of a route taking `change.*` of that service: one for its
 * clause, or one per layer of its clauses by layer.
 */
function serviceFilters(service: string, settings: ChangesServiceSettings): { owner: string; filter: RouteFilterConfig }[] {
  const { where, when, emit } = settings;
  const owner = `changes service "${service}"`;
  const base = { types: ['change.*'], services: [service], when, emit };
  if (where === undefined || typeof where === 'string') return [{ owner, filter: { ...base, where } }];
  return Object.entries(where).map(([layer, clause]) => ({ owner, filter: { ...base, layers: [Number(layer)], where: clause } }));
}

/** The filters of the configuration: its relay routes', its subscriptions', and the transition filters of its `changes` services. */
export const configuredFilters = (config: GeohookConfig): { owner: string; filter: RouteFilterConfig }[] => [
  ...config.relays.map((route) => ({ owner: `route "${route.name}"`, filter: route })),
  ...config.subscriptions.map((subscription) => ({ owner: `subscription "${subscription.name}"`, filter: subscription })),
  ...Object.entries(config.admin?.changes.byService ?? {}).flatMap(([service, settings]) =>
    isTransitionFilter(settings) ? serviceFilters(service, settings) : [],
  ),
];

/** The layers of the services read, each with the fields geohook tracks on it. */
export function checkedLayersOf(config: GeohookConfig, followed: readonly FollowedLayers[]): CheckedLayer[] {
  const changes = config.admin?.changes;
  return followed.flatMap((entry) =>
    'layers' in entry
      ? entry.layers.map((layer) => ({
          service: entry.service,
          id: layer.id,
          name: layer.name,
          fields: layer.fields,
          track: changes?.byService[entry.service]?.track ?? changes?.track ?? [],
        }))
      : [],
  );
}

/** Whether any filter of the configuration reads rows (`where`, `changed`, `when`): only those need the layers. */
const readsRows = (config: GeohookConfig): boolean =>
  configuredFilters(config).some(({ filter }) => filter.where !== undefined || filter.changed !== undefined || filter.when !== undefined);

/**
 * Checks the filters of the relay routes and subscriptions of `config` against the layer definitions of the
 * services followed for change events, read from their server (docs/relays.md#filters). Services that cannot be
 * read are listed in `unread`; their layers are not checked.
 */
export async function checkConfiguredFilters(config: GeohookConfig, options: { fetch?: typeof fetch } = {}): Promise<FiltersCheck> {
  const services = config.admin?.changes.services ?? [];
  if (!readsRows(config)) return { issues: [], unread: [], read: [] };
  const auth = config.admin === undefined ? undefined : adminAuthFor(config.admin.url, config.admin.auth);
  const followed =
    config.admin === undefined || services.length === 0
      ? []
      : await readFollowedLayers({
          adminUrl: config.admin.url,
          services,
          trusted: serviceLocatorOf(config).trusted(REGISTERED_HOOK),
          ...(auth === undefined ? {} : { auth }),
          ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        });
  const unread = followed.flatMap((entry) => ('error' in entry ? [entry] : []));
  const layers = checkedLayersOf(config, followed);
  const issues = configuredFilters(config).flatMap(({ owner, filter }) => {
    // A filter of a service that could not be read is checked once it can be: not refused for the server's absence.
    const names = filter.services ?? services;
    if (names.some((name) => unread.some((entry) => entry.service === name))) return [];
    return checkFilter(owner, filter, layers);
  });
  return { issues, unread, read: followed.flatMap((entry) => ('layers' in entry ? [entry.service] : [])) };
}

/** The error of filters that cannot match: one line per mistake. */
export const filtersError = (issues: readonly FilterIssue[]): GeohookError =>
  new GeohookError(
    'GEOHOOK_ERR_FILTER_CANNOT_MATCH',
    issues.length === 1 ? formatFilterIssue(issues[0]!) : `filters that cannot match:\n${issues.map(formatFilterIssue).join('\n')}`,
  );
