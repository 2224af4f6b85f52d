import type { RelayRouteConfig } from '../config/relay-schema.js';
import { parseWebhookSecret } from '../config/relay-secrets.js';
import { GeohookError } from '../errors.js';
import { isUnverifiedDelivery } from '../events/stored-event.js';
import { routeMatcher, type EmittedType, type RelayLayer, type RouteMatcher } from '../fanout/route-match.js';
import { isStoredEvent, type RoutedEvent, type RoutedHead } from '../fanout/routed-event.js';
import { DEFAULT_RELAY_TIMEOUT_MS } from './deliver.js';
import { formatPowerAutomate } from './formats/powerautomate.js';
import { JSON_CONTENT_TYPE, type RelayRequest } from './formats/relay-request.js';
import { formatSlack } from './formats/slack.js';
import { formatStandard } from './formats/standard.js';
import { formatTeams } from './formats/teams.js';
import { relayData } from './relay-event.js';
import { DEFAULT_RELAY_JITTER, scheduleFromPolicy, STANDARD_WEBHOOKS_SCHEDULE_MS } from './retry-schedule.js';
import { compileTransform, type RelayTransform } from './transform.js';

/** A route's filter, refusing unverified deliveries unless the route allows them: it would sign them as geohook. */
function matcherOf(route: RelayRouteConfig): RouteMatcher {
  const filter = routeMatcher(route);
  if (route.allowUnverified === true) return filter;
  const unverified = (event: RoutedHead): boolean => isStoredEvent(event) && isUnverifiedDelivery(event);
  const verified = (event: RoutedEvent, layers?: readonly RelayLayer[]): boolean | EmittedType =>
    !unverified(event) && filter(event, layers);
  const { head } = filter;
  return Object.assign(verified, {
    readsLayers: filter.readsLayers,
    head: head === undefined ? undefined : (event: RoutedHead) => !unverified(event) && head(event),
  });
}

/** A configured route, ready to use: what it takes, what it sends, and on which schedule. */
export interface RelayRoute {
  readonly name: string;
  /** The only URL it calls. */
  readonly url: string;
  /** Its filter, and unless `allowUnverified`, no delivery a signature did not verify. */
  readonly matches: RouteMatcher;
  /**
   * The request of one try, signed at `nowMs` (ms since the epoch): the body the route's transform makes of the event,
   * else its format's. Rejects with a `GEOHOOK_ERR_RELAY_TRANSFORM` error when the transform fails on the event.
   */
  request(event: RoutedEvent, nowMs: number): Promise<RelayRequest>;
  /** Its `transform`, compiled (a stream route publishes what it makes of the event). */
  readonly transform: RelayTransform | undefined;
  /** The waits between tries, ms: BullMQ's `attempts` is one more. */
  readonly scheduleMs: readonly number[];
  readonly jitter: number;
  readonly timeoutMs: number;
}

/** The format of a route as a function of the event, the try's time and the body a transform made (none: the format's own). */
type Formatter = (event: RoutedEvent, nowMs: number, body: string | undefined) => RelayRequest;

function formatterOf(route: RelayRouteConfig): Formatter {
  const secrets = route.secret === undefined ? [] : [route.secret].flat();
  const transformed = (body: string): RelayRequest => ({ headers: { 'content-type': JSON_CONTENT_TYPE }, body });
  switch (route.format) {
    case 'standard': {
      const keys = secrets.map((secret, index) => parseWebhookSecret(secret, `relays "${route.name}" secret[${index}]`));
      return (event, nowMs, body) => formatStandard(event, { keys, nowMs, ...(body === undefined ? {} : { body }) });
    }
    case 'powerautomate':
      return (event, _nowMs, body) =>
        formatPowerAutomate(event, {
          ...(secrets[0] === undefined ? {} : { secret: secrets[0] }),
          ...(body === undefined ? {} : { body }),
        });
    case 'teams':
      return (event, _nowMs, body) => (body === undefined ? formatTeams(event) : transformed(body));
    case 'slack':
      return (event, _nowMs, body) => (body === undefined ? formatSlack(event) : transformed(body));
    case 'nats':
    case 'amqp':
      return () => {
        throw new GeohookError('GEOHOOK_ERR_INTERNAL', `route "${route.name}" publishes to a broker: it makes no HTTP request`);
      };
  }
}

/**
 * A route of the configuration made ready: its secrets parsed and its transform compiled once, its headers lower-cased
 * under the format's own (but a transformed body's `content-type`, which the route may set).
 */
export function createRelayRoute(route: RelayRouteConfig): RelayRoute {
  const format = formatterOf(route);
  const transform = route.transform === undefined ? undefined : compileTransform(route.transform, route.name);
  const extra = Object.fromEntries(Object.entries(route.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  const { 'content-type': contentType, ...others } = extra;
  return {
    name: route.name,
    url: route.url,
    matches: matcherOf(route),
    transform,
    async request(event, nowMs) {
      if (transform === undefined) {
        const request = format(event, nowMs, undefined);
        return { headers: { ...extra, ...request.headers }, body: request.body };
      }
      const request = format(event, nowMs, await transform(relayData(event), event.id));
      return {
        headers: { ...others, ...request.headers, ...(contentType === undefined ? {} : { 'content-type': contentType }) },
        body: request.body,
      };
    },
    scheduleMs: route.retry === undefined ? STANDARD_WEBHOOKS_SCHEDULE_MS : scheduleFromPolicy(route.retry),
    jitter: route.retry?.backoff.jitter ?? DEFAULT_RELAY_JITTER,
    timeoutMs: route.timeoutMs ?? DEFAULT_RELAY_TIMEOUT_MS,
  };
}
