import type { Queue } from 'bullmq';
import { JobScript, scriptKeys } from '../queue/job-script.js';
import type { RedisClient } from '../redis/connection.js';
import type { ChangeEvent } from './change-event.js';
import type { LayerInfo } from './layer-info.js';

/** Change events written per script call. */
export const CHANGE_BATCH = 500;

/**
 * What else takes every written batch of change events (relay routes' fan-out, docs/relays.md): handed each batch
 * after its events are written and before the resolver's cursor moves.
 */
export interface ChangeFanout {
  /** `layers`: the definitions of the events' layers (their fields, which a route's `where` reads). */
  add(events: readonly ChangeEvent[], layers?: readonly LayerInfo[]): Promise<unknown>;
}

/**
 * Writes change events to their queue with the accept script (docs/events.md): job id = event id, and the same
 * event id on the same hook within the dedup window is written once, so a range resolved twice (a retry, a
 * receiver killed mid-range, an overlap) adds no job twice. With relay routes, each batch's events (every one, new
 * or not: a crash between the two writes is mended when the batch is written again) are then handed to the routes.
 */
export class ChangeWriter {
  readonly #script: JobScript;
  readonly #relays: ChangeFanout | undefined;

  constructor(
    connection: RedisClient,
    options: { queue: Queue; backfillQueue: Queue; prefix: string; dedupMs: number; relays?: ChangeFanout | undefined },
  ) {
    const { queue, prefix } = options;
    this.#relays = options.relays;
    this.#script = new JobScript(connection, {
      // The script writes to three event queues by index: change events use the first.
      queues: [queue, queue, queue],
      backfillQueue: options.backfillQueue,
      ...scriptKeys(prefix),
      dedupMs: options.dedupMs,
    });
  }

  /**
   * Writes `events` (at most {@link CHANGE_BATCH} per call), then their relay jobs (`layers`: the fields of their
   * layers, which routes' `where` clauses read); returns how many events were new.
   */
  async write(events: readonly ChangeEvent[], layers?: readonly LayerInfo[]): Promise<number> {
    if (events.length === 0) return 0;
    const answers = await this.#script.write(
      events.map((event) => ({
        queue: 0,
        eventId: event.id,
        hook: event.hook,
        name: event.type,
        data: JSON.stringify(event),
        ranges: [],
        activity: undefined,
      })),
    );
    await this.#relays?.add(events, layers);
    return answers.filter((answer) => answer === 1).length;
  }
}
