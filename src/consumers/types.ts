import type { Job } from 'bullmq';
import type { ChangeEvent } from '../changes/change-event.js';
import type { SubmissionEvent } from '../changes/submission-event.js';
import type { AnyGeohookEvent, FeatureEvent, GpEvent, UnknownEvent } from '../events/envelope.js';

/** What a handler gets besides the event. */
export interface HandlerContext {
  /** The BullMQ job that carries the event (its id is the event id, or `<event id>-<hook>-<time>` when that id was taken). */
  job: Job;
  /** 1 for the first attempt, then 2, 3… up to the job's `attempts`. */
  attempt: number;
  /** The pattern the handler was registered under. */
  pattern: string;
  /**
   * Set when the event was put back by hand (`geohook events replay` or `geohook events retry`): when, ISO 8601. The
   * event and its id are the same as at first, so a handler that deduplicates by id still does; one that must act
   * again on a replay can tell it by this.
   */
  replayedAt?: string;
}

/**
 * Handles one event. Throwing (or rejecting) fails this attempt: the event is retried with backoff, and
 * stays in the failed set once its attempts are used up. Throw BullMQ's `UnrecoverableError` to fail at once.
 */
export type EventHandler<E> = (event: E, context: HandlerContext) => unknown;

/**
 * A change handler that takes only the updates of some fields: a `change.updated` event whose `changedFields`
 * names one of `changed`. Other change events (creates, deletes, reads, schema changes, and updates whose
 * previous values geohook does not know, which have no `changedFields`) are not handed to it.
 */
export interface ChangedFieldsHandler {
  /** Field names, as the layer spells them. */
  changed: readonly string[];
  handler: EventHandler<ChangeEvent>;
}

/**
 * Handlers by pattern; `*` stands for any run of characters. The event type is narrowed by the pattern:
 * `gp.*` handlers get a {@link GpEvent}, `feature.*` ones a {@link FeatureEvent}, `change.*` ones a {@link ChangeEvent}
 * (a function, or a {@link ChangedFieldsHandler}). `subscribe()` takes {@link HandlersByPattern}, which also types
 * `change.submission`.
 */
export type EventHandlers = { [pattern: `gp.${string}`]: EventHandler<GpEvent> } & {
  [pattern: `feature.${string}`]: EventHandler<FeatureEvent>;
} & {
  [pattern: `change.${string}`]: EventHandler<ChangeEvent> | ChangedFieldsHandler;
} & {
  unknown?: EventHandler<UnknownEvent>;
  '*'?: EventHandler<AnyGeohookEvent>;
};

/** A pattern a handler may be given under: `gp.…`, `feature.…`, `change.…`, `unknown` or `*`. */
export type HandlerPattern = keyof EventHandlers & string;

/** What the handler of `pattern` is: `change.submission`'s takes a {@link SubmissionEvent}, the others as {@link EventHandlers} says. */
export type HandlerOf<P extends HandlerPattern> = P extends 'change.submission' ? EventHandler<SubmissionEvent> : EventHandlers[P];

/**
 * Handlers by pattern, as `subscribe()` takes them: each pattern given narrows its handler's event, as
 * {@link EventHandlers} does, and `change.submission` (which `change.*` does not take) gets a {@link SubmissionEvent}.
 * Any {@link EventHandlers} is one.
 */
export type HandlersByPattern<P extends HandlerPattern = HandlerPattern> = { [K in P]?: HandlerOf<K> };
