import { Queue } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';
import type { RelayEvent } from './relay-event.js';
import { relayJobOptions, relayQueueName } from './relay-queues.js';
import type { RelayRoute } from './relay-route.js';
import type { RelayLayer } from './route-match.js';

/** Options of {@link RelayFanout}. */
export interface RelayFanoutOptions {
  routes: readonly RelayRoute[];
  prefix: string;
  /** Delivered jobs kept (`completedJobs` of GEOHOOK_CONFIG): a re-add of an event while its job is kept adds nothing. */
  completedJobs: { readonly ageSeconds: number; readonly count: number };
}

/**
 * Adds one job per (event, route that takes it) to the route's queue, job id the event id: written after the events
 * themselves and before the writer's cursor moves, for every event of a batch (new or not), so that a crash in
 * between is mended when the batch is written again, and BullMQ's job ids make the repeat add nothing.
 */
export class RelayFanout {
  readonly #routes: { route: RelayRoute; queue: Queue }[];

  constructor(connection: RedisClient, options: RelayFanoutOptions) {
    this.#routes = options.routes.map((route) => {
      const queue = new Queue(relayQueueName(route.name), {
        connection,
        prefix: options.prefix,
        defaultJobOptions: relayJobOptions(route, options.completedJobs),
      });
      // Redis going away surfaces as the add's rejection, which the writer's job retries.
      queue.on('error', () => undefined);
      return { route, queue };
    });
  }

  /** Adds the jobs of `events` (`layers`: the fields of their layers, for routes with a `where`); resolves to how many were asked for. */
  async add(events: readonly RelayEvent[], layers?: readonly RelayLayer[]): Promise<number> {
    const added = await Promise.all(
      this.#routes.map(async ({ route, queue }) => {
        const taken = events.filter((event) => route.matches(event, layers));
        if (taken.length > 0) await queue.addBulk(taken.map((event) => ({ name: event.type, data: event, opts: { jobId: event.id } })));
        return taken.length;
      }),
    );
    return added.reduce((sum, count) => sum + count, 0);
  }

  async close(): Promise<void> {
    await Promise.all(this.#routes.map(({ queue }) => queue.close()));
  }
}
