import type { StoredEvent } from '../events/envelope.js';
import { serviceNameOf } from '../events/service-activity.js';
import type { QueueSource } from './find-event-job.js';
import { allQueueNames } from './names.js';

/** The job states an event is listed in, newest first within each. */
const STATES = ['active', 'waiting', 'delayed', 'failed', 'completed'] as const;

/** An event as the dashboard lists it: what it is, where from, and where its job is. */
export interface RecentEvent {
  id: string;
  type: string;
  /** `folder/name.Type`, as its payload names it; undefined when it names none. */
  service: string | undefined;
  receivedAt: string;
  source: 'webhook' | 'backfill' | 'poll';
  verified: boolean;
  state: (typeof STATES)[number];
  queue: string;
}

/** Options of {@link recentEvents}. */
export interface RecentEventsQuery {
  /** Only the events of this service. */
  service?: string;
  /** Most events listed. @defaultValue 50 */
  limit?: number;
}

/** Jobs read per queue and state for one service's events: enough for `limit` of them among the others'. */
const SCAN = 200;

/** The newest events across the event queues, in every state, newest first (the dashboard's recent events). */
export async function recentEvents(queues: QueueSource, query: RecentEventsQuery = {}): Promise<RecentEvent[]> {
  const limit = query.limit ?? 50;
  // The newest `limit` of all are among the newest `limit` of each queue and state.
  const scan = query.service === undefined ? limit : SCAN;
  const lists = await Promise.all(
    allQueueNames.flatMap((name) =>
      STATES.map(async (state) => {
        const jobs = await queues.queue(name).getJobs([state], 0, scan - 1);
        return jobs.flatMap((job) => {
          const event = job.data as Partial<StoredEvent> | null;
          if (typeof event?.id !== 'string' || typeof event.type !== 'string' || event.service === undefined) return [];
          const service = event.family === undefined ? undefined : serviceNameOf({ service: event.service, family: event.family });
          return [
            {
              id: event.id,
              type: event.type,
              service,
              receivedAt: event.receivedAt ?? new Date(job.timestamp).toISOString(),
              source: event.source ?? 'webhook',
              verified: event.verified === true,
              state,
              queue: name,
            } satisfies RecentEvent,
          ];
        });
      }),
    ),
  );
  return lists
    .flat()
    .filter((event) => query.service === undefined || event.service === query.service)
    .sort((a, b) => b.receivedAt.localeCompare(a.receivedAt))
    .slice(0, limit);
}
