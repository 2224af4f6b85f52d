import type { ChangeEvent } from '../changes/change-event.js';
import type { SubmissionEvent } from '../changes/submission-event.js';
import type { StoredEvent } from '../events/envelope.js';

/**
 * What the fan-out hands on to relay routes and subscriptions: a change event (`change.*`, the job data of the
 * `change-events` queue) or a stored feature, GP or unknown event (the job data of the event queues).
 */
export type RoutedEvent = ChangeEvent | SubmissionEvent | StoredEvent;

/** True for a change event (a `change.submission` too); false for a stored feature, GP or unknown event (those carry a `family`). */
export const isChangeEvent = (event: RoutedEvent): event is ChangeEvent | SubmissionEvent => !('family' in event);

/** True for a `change.submission`. */
export const isSubmissionEvent = (event: RoutedEvent): event is SubmissionEvent => event.type === 'change.submission';

/**
 * A change event as filters read it: a submission is its parent's creation (`where` and `when` read the parent's
 * row; `changed` takes none).
 */
export const filteredChange = (event: ChangeEvent | SubmissionEvent): ChangeEvent =>
  event.type === 'change.submission'
    ? {
        ...event.parent,
        id: event.id,
        type: 'change.created',
        op: 'c',
        hook: event.hook,
        service: event.service,
        before: null,
        ts: event.ts,
        source: NO_SOURCE,
      }
    : event;

const NO_SOURCE: ChangeEvent['source'] = { origin: 'webhook', serverGens: [0, 0], transaction: { id: '', index: 0, total: 1 } };
