import type { Job, Queue } from 'bullmq';
import type { ChangeEvent } from '../changes/change-event.js';
import type { StoredEvent } from '../events/envelope.js';
import { serviceNameOf } from '../events/service-activity.js';
import type { QueueSource } from '../queue/find-event-job.js';
import { allQueueNames } from '../queue/names.js';

/** The job states an event is listed in, newest first within each. */
const STATES = ['active', 'waiting', 'delayed', 'failed', 'completed'] as const;

/** An event as the dashboard lists it: what it is, where from, and where its job is. */
export interface RecentEvent {
  id: string;
  type: string;
  /** `folder/name.Type`, as its payload names it; undefined when it names none. */
  service: string | undefined;
  /** When it was received; for a relay try, when it was last tried (or queued, before its first try). */
  receivedAt: string;
  /** Where it comes from, as text: `webhook`, `webhook, unsigned`, `backfill`, `poll`, `change, <origin>`, `relay <route>, try N` (or `not tried yet`). */
  source: string;
  state: (typeof STATES)[number];
  queue: string;
}

/** A queue the recent events list beside the event queues: the change events, or a relay route's tries (`route`). */
export interface RecentQueue {
  queue: Queue;
  /** The relay route whose queue it is; none for the change events. */
  route?: string;
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

const isoOf = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

/** An event of an event queue (a delivery, backfill or poll), or nothing for a job that is not one. */
function storedEventOf(job: Job, state: RecentEvent['state'], queue: string): RecentEvent | undefined {
  const event = job.data as Partial<StoredEvent> | null;
  if (typeof event?.id !== 'string' || typeof event.type !== 'string' || event.service === undefined) return undefined;
  const source = event.source ?? 'webhook';
  return {
    id: event.id,
    type: event.type,
    service: event.family === undefined ? undefined : serviceNameOf({ service: event.service, family: event.family }),
    receivedAt: event.receivedAt ?? new Date(job.timestamp).toISOString(),
    source: source === 'webhook' && event.verified !== true ? 'webhook, unsigned' : source,
    state,
    queue,
  };
}

/** A change event, or a relay route's try of any event (change, feature or GP), or nothing for a job that is neither. */
function routedEventOf(job: Job, state: RecentEvent['state'], { queue, route }: RecentQueue): RecentEvent | undefined {
  const event = job.data as Partial<ChangeEvent & StoredEvent> | null;
  if (typeof event?.id !== 'string' || typeof job.name !== 'string' || typeof event.service !== 'object' || event.service === null)
    return undefined;
  // A change event is a feature service's, and says its type.
  const service = serviceNameOf({ service: event.service, family: event.family ?? 'feature' });
  const tried = isoOf(job.finishedOn ?? job.processedOn);
  return {
    id: job.id ?? event.id,
    type: job.name,
    service,
    receivedAt: (route === undefined ? undefined : tried) ?? new Date(job.timestamp).toISOString(),
    source:
      route === undefined
        ? `change, ${event.source?.origin ?? 'webhook'}`
        : `relay ${route}, ${job.attemptsMade === 0 ? 'not tried yet' : `try ${job.attemptsMade}`}`,
    state,
    queue: queue.name,
  };
}

/**
 * The newest events across the event queues, the change events and the relay routes' tries (`more`), in every
 * state, newest first (the dashboard's recent events).
 */
export async function recentEvents(
  queues: QueueSource,
  query: RecentEventsQuery = {},
  more: readonly RecentQueue[] = [],
): Promise<RecentEvent[]> {
  const limit = query.limit ?? 50;
  // The newest `limit` of all are among the newest `limit` of each queue and state.
  const scan = query.service === undefined ? limit : SCAN;
  const read = (queue: Queue, of: (job: Job, state: RecentEvent['state']) => RecentEvent | undefined) =>
    STATES.map(async (state) =>
      (await queue.getJobs([state], 0, scan - 1)).flatMap((job) => {
        const event = job === undefined ? undefined : of(job, state);
        return event === undefined ? [] : [event];
      }),
    );
  const lists = await Promise.all([
    ...allQueueNames.flatMap((name) => read(queues.queue(name), (job, state) => storedEventOf(job, state, name))),
    ...more.flatMap((recent) => read(recent.queue, (job, state) => routedEventOf(job, state, recent))),
  ]);
  return lists
    .flat()
    .filter((event) => query.service === undefined || event.service === query.service)
    .sort((a, b) => b.receivedAt.localeCompare(a.receivedAt))
    .slice(0, limit);
}
