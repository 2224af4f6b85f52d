import type { LayerInfo } from '../arcgis-request/layer-info.js';
import type { ChangesServiceSettings } from '../config/types.js';
import { QueueScript, type PlainEvent, type QueueScriptOptions } from '../queue/job-script.js';
import type { RedisClient } from '../redis/connection.js';
import type { ChangeEvent } from './change-event.js';
import { serviceEventFilter } from './change-filter.js';
import { LayerFieldsRecorder } from './layer-fields.js';
import type { SubmissionEvent } from './submission-event.js';

/** Change events written per script call. */
export const CHANGE_BATCH = 500;

/** Change events ready to write ({@link ChangeWriter.prepare}): those the transition filters keep, each with its job. */
export interface PreparedEvents {
  readonly events: readonly ChangeEvent[];
  /** The definitions of their layers, whose fields `where` filters read. */
  readonly layers: readonly LayerInfo[];
  /** Each event's job: its id, hook, type, and the event as JSON. */
  readonly jobs: readonly PlainEvent[];
}

/**
 * Writes change events to their queue with the accept script (docs/events.md): job id = event id, and the same
 * event id on the same hook within the dedup window is written once, so a range resolved twice (a retry, a
 * receiver killed mid-range, an overlap) adds no job twice. The script appends each new one to the event log, from
 * which the fan-out hands it to relay routes and subscriptions; the fields of its layer are recorded first, for
 * their `where` filters.
 */
export class ChangeWriter {
  readonly #script: QueueScript;
  readonly #layerFields: LayerFieldsRecorder;

  readonly #filter: ReturnType<typeof serviceEventFilter>;

  /** `byService`: the services' settings, whose transition filters keep or drop each event once built (docs/changes.md#transitions). */
  constructor(connection: RedisClient, options: QueueScriptOptions & { byService?: Readonly<Record<string, ChangesServiceSettings>> }) {
    this.#layerFields = new LayerFieldsRecorder(connection, options.prefix);
    this.#script = new QueueScript(connection, options);
    this.#filter = serviceEventFilter(options.byService ?? {});
  }

  /**
   * Writes the events `built` that the services' transition filters keep (at most {@link CHANGE_BATCH} per call;
   * `layers`: the definitions of their layers, whose fields `where` filters read); returns how many events were new.
   */
  write(built: readonly ChangeEvent[], layers: readonly LayerInfo[] = []): Promise<number> {
    return this.writePrepared(this.prepare(built, layers));
  }

  /**
   * The CPU part of {@link write}, without Redis: the events the transition filters keep, and their jobs. A resolver
   * prepares a batch while the one before it is written.
   */
  prepare(built: readonly ChangeEvent[], layers: readonly LayerInfo[] = []): PreparedEvents {
    const events = this.#filter === undefined ? built : this.#filter(built, layers);
    const jobs = events.map((event) => ({ eventId: event.id, hook: event.hook, name: event.type, data: JSON.stringify(event) }));
    return { events, layers, jobs };
  }

  /** Writes events {@link prepare}d; returns how many were new. */
  async writePrepared({ events, layers, jobs }: PreparedEvents): Promise<number> {
    if (events.length === 0) return 0;
    await this.#layerFields.record(events, layers);
    const answers = await this.#script.write(jobs);
    return answers.filter((answer) => answer === 1).length;
  }

  /** Writes a `change.submission` (written once within the dedup window, whoever writes it); true when it was new. */
  async writeSubmission(event: SubmissionEvent): Promise<boolean> {
    const [answer] = await this.#script.write([{ eventId: event.id, hook: event.hook, name: event.type, data: JSON.stringify(event) }]);
    return answer === 1;
  }
}
