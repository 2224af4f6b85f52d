import { changeEventsQueueName } from '../changes/change-event.js';
import { layerFieldsField } from '../changes/layer-fields.js';
import type { RelayRouteConfig } from '../config/relay-schema.js';
import { SHARED_SECRET_HEADER } from '../config/relay-secrets.js';
import type { RouteFilterConfig } from '../config/route-filter.js';
import { GeohookError } from '../errors.js';
import { isUnverifiedDelivery } from '../events/stored-event.js';
import { routeMatcher, type RelayLayer } from '../fanout/route-match.js';
import { filteredChange, isChangeEvent, type RoutedEvent } from '../fanout/routed-event.js';
import { allQueueNames } from '../queue/names.js';
import { openQueue } from '../queue/open-queue.js';
import type { RedisClient } from '../redis/connection.js';
import { layerFieldsKey } from '../redis/keys.js';
import { relayQueueName } from './relay-queues.js';
import { createRelayRoute, type RelayRoute } from './relay-route.js';
import { RelayTransformError } from './transform.js';

/** What a route would do with an event (`geohook relay test`, the relays view): nothing is sent. */
export interface RelayDryRun {
  route: string;
  event: { id: string; type: string };
  /** Whether the route takes the event (its filter, and no unverified delivery unless it allows them). */
  matches: boolean;
  /** Why: each filter that decided, in words. */
  why: string;
  /** The body the route would send (its transform's, else its format's), as JSON; null when the transform failed. */
  body: unknown;
  /** The headers it would send, the values of secrets and signatures and of the route's own `headers` redacted. */
  headers: Record<string, string>;
  /** The `GEOHOOK_ERR_RELAY_TRANSFORM` text, when the transform failed on the event (it would be a dead letter). */
  error?: string;
}

/** An event of a route's queue, as the relays view lists it. */
export interface RouteEvent {
  id: string;
  type: string;
  state: string;
  /** When its job was added, ISO 8601. */
  addedAt: string;
}

/** What stands for a value not shown. */
export const REDACTED = '(redacted)';

/** Every type pattern: a filter tried alone is tried with these. */
const ANY_TYPE = ['change.*', 'feature.*', 'gp.*'];
/** Keys of a route that are not filters. */
const NOT_FILTERS = new Set(['name', 'url', 'format', 'secret', 'headers', 'timeoutMs', 'retry', 'allowUnverified', 'transform', 'types']);

/** Why a filter tried alone does not hold, beyond "it does not". */
function whyNot(key: string, event: RoutedEvent, layers: readonly RelayLayer[] | undefined): string {
  if (!isChangeEvent(event)) return key === 'services' || key === 'layers' ? '' : ' (a feature or GP event carries no row)';
  const change = filteredChange(event);
  if (key === 'where' && layers === undefined)
    return ` (the fields of layer ${event.layer.id} of ${event.service.serviceName} are not known: geohook records them when it writes the layer's change events)`;
  if (key === 'where' && change.op === 'd' && change.before === undefined) return ' (a delete whose previous row geohook does not know)';
  if (key === 'changed' && change.op !== 'u') return ` (only updates: this is a ${event.type})`;
  return '';
}

/** The verdict of `route` on `event` and why: each filter tried alone, the route's own matcher deciding. */
export function explainMatch(
  route: RelayRouteConfig,
  matches: RelayRoute['matches'],
  event: RoutedEvent,
  layers: readonly RelayLayer[] | undefined,
): { matches: boolean; why: string } {
  const verdict = matches(event, layers);
  const held: string[] = [];
  const failed: string[] = [];
  const types = route.types.join(', ');
  if (routeMatcher({ types: route.types })(event)) held.push(`types ${types} take ${event.type}`);
  else failed.push(`${event.type} is none of its types (${types})`);
  if (!isChangeEvent(event) && isUnverifiedDelivery(event) && route.allowUnverified !== true)
    failed.push('a delivery no signature verified, and the route does not set "allowUnverified": true');
  for (const [key, value] of Object.entries(route)) {
    if (NOT_FILTERS.has(key) || value === undefined) continue;
    const alone = routeMatcher({ types: ANY_TYPE, [key]: value } as RouteFilterConfig)(event, layers);
    const said = `${key} ${JSON.stringify(value)}`;
    if (alone) held.push(`${said} holds`);
    else failed.push(`${said} does not hold${whyNot(key, event, layers)}`);
  }
  if (verdict) return { matches: true, why: `takes it: ${held.join('; ')}` };
  if (failed.length > 0) return { matches: false, why: `does not take it: ${failed.join('; ')}` };
  return { matches: false, why: `does not take it: its filters hold one by one (${held.join('; ')}) but not together` };
}

/** The headers as a dry run shows them: no secret, no signature, none of the route's own values but a content type. */
function redact(headers: Record<string, string>, own: ReadonlySet<string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => {
      if (name === 'webhook-signature') return [name, value.replace(/v1,\S+/g, `v1,${REDACTED}`)];
      if (name === SHARED_SECRET_HEADER || (own.has(name) && name !== 'content-type')) return [name, REDACTED];
      return [name, value];
    }),
  );
}

/** What a route would do with an event, without sending it. `layers`: the event's layer's fields (for `where`). */
export async function dryRunRelay(
  config: RelayRouteConfig,
  event: RoutedEvent,
  options: { layers?: readonly RelayLayer[] | undefined; nowMs?: number; route?: RelayRoute } = {},
): Promise<RelayDryRun> {
  const route = options.route ?? createRelayRoute(config);
  const verdict = explainMatch(config, route.matches, event, options.layers);
  const result = { route: config.name, event: { id: event.id, type: event.type }, ...verdict };
  const own = new Set(Object.keys(config.headers ?? {}).map((name) => name.toLowerCase()));
  try {
    const request = await route.request(event, options.nowMs ?? Date.now());
    return { ...result, body: JSON.parse(request.body) as unknown, headers: redact(request.headers, own) };
  } catch (err) {
    if (!(err instanceof RelayTransformError)) throw err;
    return { ...result, body: null, headers: {}, error: `${err.code}: ${err.message}` };
  }
}

/** The fields of a change event's layer as the fan-out last recorded them; undefined for other events or a layer not yet seen. */
export async function layersOfEvent(connection: RedisClient, prefix: string, event: RoutedEvent): Promise<RelayLayer[] | undefined> {
  if (!isChangeEvent(event)) return undefined;
  const fields = await connection.hget(layerFieldsKey(prefix), layerFieldsField(event));
  return fields === null ? undefined : [{ id: event.layer.id, fields: JSON.parse(fields) as RelayLayer['fields'] }];
}

/** Whether a value has the shape of an event the fan-out routes: an id and a type, and a family or a service and layer. */
export function isRoutedEvent(value: unknown): value is RoutedEvent {
  const event = value as Partial<Record<string, unknown>> | null;
  if (typeof event !== 'object' || event === null || typeof event.id !== 'string' || typeof event.type !== 'string') return false;
  const layer = event.layer as { id?: unknown } | undefined;
  return 'family' in event || (typeof event.service === 'object' && typeof layer?.id === 'number');
}

/** The route of that name; a `GEOHOOK_ERR_RELAY_UNKNOWN_ROUTE` error naming the others when there is none. */
export function relayRouteNamed(routes: readonly RelayRouteConfig[], name: string): RelayRouteConfig {
  const found = routes.find((route) => route.name === name);
  if (found !== undefined) return found;
  const names = routes.map((route) => route.name);
  throw new GeohookError(
    'GEOHOOK_ERR_RELAY_UNKNOWN_ROUTE',
    `no route "${name}" in GEOHOOK_CONFIG's relays (${names.length === 0 ? 'it has none' : `it has ${names.join(', ')}`})`,
  );
}

/**
 * Dry runs against what Redis holds (the CLI and the relays view): routes by name, an event by id from the route's
 * queue, `change-events` or the event queues, and the route's last events.
 */
export class RelayDryRunner {
  readonly #connection: RedisClient;
  readonly #prefix: string;
  readonly #routes: ReadonlyMap<string, { config: RelayRouteConfig; route: RelayRoute }>;

  constructor(connection: RedisClient, prefix: string, routes: readonly RelayRouteConfig[]) {
    this.#connection = connection;
    this.#prefix = prefix;
    this.#routes = new Map(routes.map((config) => [config.name, { config, route: createRelayRoute(config) }]));
  }

  /** The configured route of that name; a `GEOHOOK_ERR_RELAY_UNKNOWN_ROUTE` error naming the others when there is none. */
  routeConfig(name: string): RelayRouteConfig {
    return (
      this.#routes.get(name)?.config ??
      relayRouteNamed(
        [...this.#routes.values()].map(({ config }) => config),
        name,
      )
    );
  }

  async #job(queueName: string, id: string): Promise<unknown> {
    const queue = openQueue(queueName, { connection: this.#connection, prefix: this.#prefix });
    try {
      return (await queue.getJob(id))?.data as unknown;
    } finally {
      await queue.close();
    }
  }

  /** The event of that id: a job of the route's queue, of `change-events` or of an event queue; a `GEOHOOK_ERR_RELAY_TEST_INPUT` error when none is kept. */
  async event(route: string, id: string): Promise<RoutedEvent> {
    for (const name of [relayQueueName(route), changeEventsQueueName, ...allQueueNames]) {
      const data = await this.#job(name, id);
      if (isRoutedEvent(data)) return data;
    }
    throw new GeohookError(
      'GEOHOOK_ERR_RELAY_TEST_INPUT',
      `no event ${id} is kept in ${relayQueueName(route)}, ${changeEventsQueueName} or the event queues (completed jobs are kept for completedJobs.ageSeconds): give it with --file`,
    );
  }

  /** What route `name` would do with `event` (given, or the one of that id), with the fields of its layer from Redis. */
  async run(name: string, event: RoutedEvent | { id: string }, nowMs = Date.now()): Promise<RelayDryRun> {
    const config = this.routeConfig(name);
    const found = isRoutedEvent(event) ? event : await this.event(name, event.id);
    const layers = await layersOfEvent(this.#connection, this.#prefix, found);
    return dryRunRelay(config, found, { layers, nowMs, route: this.#routes.get(name)!.route });
  }

  /** The route's last events in its queue, newest first: those it took, delivered, pending or dead. */
  async recent(name: string, limit = 10): Promise<RouteEvent[]> {
    this.routeConfig(name);
    const queue = openQueue(relayQueueName(name), { connection: this.#connection, prefix: this.#prefix });
    try {
      const states = ['active', 'waiting', 'delayed', 'failed', 'completed'] as const;
      const lists = await Promise.all(
        states.map(async (state) => (await queue.getJobs([state], 0, limit - 1)).map((job) => ({ job, state }))),
      );
      return lists
        .flat()
        .filter(({ job }) => job?.id !== undefined)
        .sort((a, b) => b.job.timestamp - a.job.timestamp)
        .slice(0, limit)
        .map(({ job, state }) => ({ id: job.id!, type: job.name, state, addedAt: new Date(job.timestamp).toISOString() }));
    } finally {
      await queue.close();
    }
  }
}
