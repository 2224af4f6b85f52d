import type { JobsOptions } from 'bullmq';
import type { RelayRoute } from './relay-route.js';
import { relayAttempts } from './retry-schedule.js';

/** The queue of a route's deliveries: one job per event it takes, job id the event id. */
export const relayQueueName = (route: string): string => `relay-${route}`;

/**
 * The options of a route's jobs: its attempts, the custom backoff (the route's schedule, in the worker's settings),
 * delivered jobs kept as the events queues keep theirs (`completedJobs`: while kept, a re-add of the same event is a
 * no-op), failed ones kept as the route's dead letters until replayed.
 */
export function relayJobOptions(route: RelayRoute, completed: { readonly ageSeconds: number; readonly count: number }): JobsOptions {
  return {
    attempts: relayAttempts(route.scheduleMs),
    backoff: { type: 'custom' },
    removeOnComplete: { age: completed.ageSeconds, count: completed.count },
    removeOnFail: false,
  };
}
