import type { RelayRouteConfig } from '../config/relay-schema.js';
import { parseWebhookSecret } from '../config/relay-secrets.js';
import { GeohookError } from '../errors.js';
import { isUnverifiedDelivery } from '../events/stored-event.js';
import { routeMatcher, type RouteMatcher } from '../fanout/route-match.js';
import { isChangeEvent, type RoutedEvent } from '../fanout/routed-event.js';
import { DEFAULT_RELAY_TIMEOUT_MS } from './deliver.js';
import { formatPowerAutomate } from './formats/powerautomate.js';
import type { RelayRequest } from './formats/relay-request.js';
import { formatSlack } from './formats/slack.js';
import { formatStandard } from './formats/standard.js';
import { formatTeams } from './formats/teams.js';
import { DEFAULT_RELAY_JITTER, scheduleFromPolicy, STANDARD_WEBHOOKS_SCHEDULE_MS } from './retry-schedule.js';

/** A route's filter, refusing unverified deliveries unless the route allows them: it would sign them as geohook. */
function matcherOf(route: RelayRouteConfig): RouteMatcher {
  const filter = routeMatcher(route);
  if (route.allowUnverified === true) return filter;
  return (event, layers) => (isChangeEvent(event) || !isUnverifiedDelivery(event)) && filter(event, layers);
}

/** A configured route, ready to use: what it takes, what it sends, and on which schedule. */
export interface RelayRoute {
  readonly name: string;
  /** The only URL it calls. */
  readonly url: string;
  /** Its filter, and unless `allowUnverified`, no delivery a signature did not verify. */
  readonly matches: RouteMatcher;
  /** The request of one try, signed at `nowMs` (ms since the epoch). */
  request(event: RoutedEvent, nowMs: number): RelayRequest;
  /** The waits between tries, ms: BullMQ's `attempts` is one more. */
  readonly scheduleMs: readonly number[];
  readonly jitter: number;
  readonly timeoutMs: number;
}

/** The format of a route as a function of the event and the try's time. */
function formatterOf(route: RelayRouteConfig): (event: RoutedEvent, nowMs: number) => RelayRequest {
  const secrets = route.secret === undefined ? [] : [route.secret].flat();
  switch (route.format) {
    case 'standard': {
      const keys = secrets.map((secret, index) => parseWebhookSecret(secret, `relays "${route.name}" secret[${index}]`));
      return (event, nowMs) => formatStandard(event, { keys, nowMs });
    }
    case 'powerautomate':
      return (event) => formatPowerAutomate(event, secrets[0] === undefined ? {} : { secret: secrets[0] });
    case 'teams':
      return (event) => formatTeams(event);
    case 'slack':
      return (event) => formatSlack(event);
    case 'nats':
    case 'amqp':
      return () => {
        throw new GeohookError('GEOHOOK_ERR_INTERNAL', `route "${route.name}" publishes to a broker: it makes no HTTP request`);
      };
  }
}

/** A route of the configuration made ready: its secrets parsed once, its headers lower-cased under the format's own. */
export function createRelayRoute(route: RelayRouteConfig): RelayRoute {
  const format = formatterOf(route);
  const extra = Object.fromEntries(Object.entries(route.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    name: route.name,
    url: route.url,
    matches: matcherOf(route),
    request(event, nowMs) {
      const request = format(event, nowMs);
      return { headers: { ...extra, ...request.headers }, body: request.body };
    },
    scheduleMs: route.retry === undefined ? STANDARD_WEBHOOKS_SCHEDULE_MS : scheduleFromPolicy(route.retry),
    jitter: route.retry?.backoff.jitter ?? DEFAULT_RELAY_JITTER,
    timeoutMs: route.timeoutMs ?? DEFAULT_RELAY_TIMEOUT_MS,
  };
}
