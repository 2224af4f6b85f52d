import type { ChangeEvent } from '../changes/change-event.js';
import type { SubmissionEvent } from '../changes/submission-event.js';
import type { StoredEvent } from '../events/envelope.js';

/**
 * What the fan-out hands on to relay routes and subscriptions: a change event (`change.*`, the job data of the
 * `change-events` queue) or a stored feature, GP or unknown event (the job data of the event queues).
 */
export type RoutedEvent = ChangeEvent | SubmissionEvent | StoredEvent;

/**
 * What names a change event and its feature, without its rows: what a route without row filters reads of it, and
 * what a stream lane publishes it by (docs/streams.md#messages).
 */
export type ChangeHead = Pick<ChangeEvent, 'id' | 'type' | 'op' | 'hook' | 'service' | 'layer' | 'key'>;

/** An event, or the head of a change event: what a reader that needs no rows holds (a whole event is one too). */
export type RoutedHead = RoutedEvent | ChangeHead;

/** True for a change event (a `change.submission` too); false for a stored feature, GP or unknown event (those carry a `family`). */
export const isChangeEvent = (event: RoutedEvent): event is ChangeEvent | SubmissionEvent => !isStoredEvent(event);

/** True for a stored feature, GP or unknown event, of an event or a head. */
export const isStoredEvent = (event: RoutedHead): event is StoredEvent => 'family' in event;

/** True for a whole event: a stored event, a submission, a change event with its rows (`after`, null for deletes). */
export const isWholeEvent = (event: RoutedHead): event is RoutedEvent => 'family' in event || 'after' in event || 'parent' in event;

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
