import type { AlertSender } from '../health/alert-sender.js';
import type { RedisClient } from '../redis/connection.js';
import { relayStatsKey } from '../redis/keys.js';

/** Failed tries in a row after which a route is said to be failing (ALERT_URL). */
export const RELAY_FAILING_AFTER = 10;

/** The `relay.failing` alerts of the routes. */
export interface RelayAlerts {
  /** A route's failed tries in a row (shared by every receiver) and its last error. */
  failing(route: string, failing: number, lastError: string): void;
  /** An event used every try of the route. */
  deadLetter(route: string, eventId: string | undefined, error: string): void;
}

/**
 * A `relay.failing` alert once per episode of a route: when it has failed {@link RELAY_FAILING_AFTER} tries in a
 * row, or when an event becomes its dead letter, whichever comes first. The episode is marked in the route's
 * counts (`alerted`, set once for every receiver) and ends with its next delivery, which clears the mark.
 */
export function createRelayAlerts(options: { redis: RedisClient; prefix: string; alert: AlertSender }): RelayAlerts {
  const { redis, prefix, alert } = options;
  const once = (route: string, text: string, fields: Record<string, unknown>): void => {
    void redis
      .hsetnx(relayStatsKey(prefix, route), 'alerted', '1')
      .then((first) => (first === 1 ? alert({ event: 'relay.failing', service: route, text, route, ...fields }) : undefined))
      .catch(() => undefined);
  };
  return {
    failing(route, failing, lastError) {
      if (failing < RELAY_FAILING_AFTER) return;
      once(route, `geohook: relay route ${route} failed ${failing} tries in a row (${lastError}); geohook relay status shows it`, {
        failing,
        error: lastError,
      });
    },
    deadLetter(route, eventId, error) {
      once(
        route,
        `geohook: relay route ${route} gave up on an event after its last try (${error}); geohook relay replay --name ${route} sends it again`,
        {
          eventId,
          error,
        },
      );
    },
  };
}
