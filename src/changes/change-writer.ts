import type { Queue } from 'bullmq';
import { JobScript, scriptKeys } from '../queue/job-script.js';
import type { RedisClient } from '../redis/connection.js';
import type { RelayFanout } from '../relay/relay-fanout.js';
import type { RelayLayer } from '../relay/route-match.js';
import type { ChangeEvent } from './change-event.js';

/** Change events written per script call. */
export const CHANGE_BATCH = 500;

/**
 * Writes change events to their queue with the accept script (docs/events.md): job id = event id, and the same
 * event id on the same hook within the dedup window is written once, so a range resolved twice (a retry, a
 * receiver killed mid-range, an overlap) adds no job twice. With relay routes, each batch's events (every one, new
 * or not: a crash between the two writes is mended when the batch is written again) are then handed to the routes.
 */
export class ChangeWriter {
  readonly #script: JobScript;
  readonly #relays: RelayFanout | undefined;

  constructor(
    connection: RedisClient,
    options: { queue: Queue; backfillQueue: Queue; prefix: string; dedupMs: number; relays?: RelayFanout | undefined },
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
  async write(events: readonly ChangeEvent[], layers?: readonly RelayLayer[]): Promise<number> {
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
