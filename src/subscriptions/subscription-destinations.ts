import type { JobsOptions } from 'bullmq';
import type { BacklogLimits } from '../config/subscription-schema.js';
import type { Destination } from '../fanout/destination.js';
import { routeMatcher } from '../fanout/route-match.js';
import type { DestinationSource } from '../fanout/start-fanout.js';
import { subscriptionQueueName } from '../queue/names.js';
import { subscriptionDestinationName, type SubscriptionDefinition, type SubscriptionRegistry } from './subscription-registry.js';

/** A subscription's caps: its own, else the defaults of `subscriptionBacklog`. */
export const backlogOf = (definition: SubscriptionDefinition, defaults: BacklogLimits): BacklogLimits => ({
  count: definition.backlog?.count ?? defaults.count,
  ageSeconds: definition.backlog?.ageSeconds ?? defaults.ageSeconds,
});

/** A subscription as a destination of the fan-out: its queue, its filter, its start and its caps. */
export function subscriptionDestination(definition: SubscriptionDefinition, jobOptions: JobsOptions, defaults: BacklogLimits): Destination {
  const backlog = backlogOf(definition, defaults);
  return {
    name: subscriptionDestinationName(definition.name),
    queue: subscriptionQueueName(definition.name),
    matches: routeMatcher(definition),
    jobOptions,
    after: definition.after,
    backlog: { count: backlog.count, ageMs: backlog.ageSeconds * 1000 },
  };
}

/** The subscriptions of the registry as the fan-out's destinations, read again for each version. */
export function subscriptionDestinations(
  registry: SubscriptionRegistry,
  options: { jobOptions: JobsOptions; backlog: BacklogLimits },
): DestinationSource {
  return async () => (await registry.list()).map((definition) => subscriptionDestination(definition, options.jobOptions, options.backlog));
}
