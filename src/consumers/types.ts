import type { Job } from 'bullmq';
import type { ChangeEvent } from '../changes/change-event.js';
import type { AnyGeohookEvent, FeatureEvent, GpEvent, UnknownEvent } from '../events/envelope.js';

/** What a handler gets besides the event. */
export interface HandlerContext {
  /** The BullMQ job that carries the event (its id is the event id, or `<event id>-<hook>-<time>` when that id was taken). */
  job: Job;
  /** 1 for the first attempt, then 2, 3… up to the job's `attempts`. */
  attempt: number;
  /** The pattern the handler was registered under. */
  pattern: string;
}

/**
 * Handles one event. Throwing (or rejecting) fails this attempt: the event is retried with backoff, and
 * stays in the failed set once its attempts are used up. Throw BullMQ's `UnrecoverableError` to fail at once.
 */
export type EventHandler<E> = (event: E, context: HandlerContext) => unknown;

/**
 * Handlers by pattern; `*` stands for any run of characters. The event type is narrowed by the pattern:
 * `gp.*` handlers get a {@link GpEvent}, `feature.*` ones a {@link FeatureEvent}, `change.*` ones a {@link ChangeEvent}.
 */
export type EventHandlers = { [pattern: `gp.${string}`]: EventHandler<GpEvent> } & {
  [pattern: `feature.${string}`]: EventHandler<FeatureEvent>;
} & {
  [pattern: `change.${string}`]: EventHandler<ChangeEvent>;
} & {
  unknown?: EventHandler<UnknownEvent>;
  '*'?: EventHandler<AnyGeohookEvent>;
};
