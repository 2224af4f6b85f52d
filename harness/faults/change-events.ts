import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, type JobType } from 'bullmq';
import { Redis } from 'ioredis';
import { changeEventsQueueName, type ChangeEvent } from '../../src/changes/change-event.js';
import { changesQueueName } from '../../src/changes/change-queues.js';
import { changesPendingKey, submissionsDueKey } from '../../src/redis/keys.js';
import { allStates } from './audit.js';

/** The states of a resolve job not finished: waiting, running, or retrying after a backoff. */
const unfinished: JobType[] = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'];

/** Change events read per page in the audit. */
const PAGE = 5000;

/**
 * A scenario's view of the change events under `prefix`, through BullMQ on a connection of its own. The
 * connection outlives a Redis kill: a question asked while Redis is down is answered once it is back.
 */
export class ChangeEventsProbe {
  readonly #connection: Redis;
  readonly #events: Queue;
  readonly #resolves: Queue;
  readonly #pendingKey: string;
  readonly #submissionsDueKey: string;

  constructor(redisUrl: string, prefix: string) {
    this.#connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    this.#events = new Queue(changeEventsQueueName, { connection: this.#connection, prefix });
    this.#resolves = new Queue(changesQueueName, { connection: this.#connection, prefix });
    this.#pendingKey = changesPendingKey(prefix);
    this.#submissionsDueKey = submissionsDueKey(prefix);
    // Connection errors while Redis is killed are expected: the connection reconnects.
    for (const emitter of [this.#connection, this.#events, this.#resolves]) emitter.on('error', () => undefined);
  }

  /** Change events in Redis, in any state. */
  written(): Promise<number> {
    return this.#events.getJobCountByTypes(...allStates);
  }

  /** True while a range is claimed and not released, or a resolve job is not finished. */
  async resolving(): Promise<boolean> {
    const [pending, jobs] = await Promise.all([this.#connection.hlen(this.#pendingKey), this.#resolves.getJobCountByTypes(...unfinished)]);
    return pending > 0 || jobs > 0;
  }

  /** Submissions not closed yet (docs/submissions.md): those with a parent and another part, due or leased. */
  submissionsOpen(): Promise<number> {
    return this.#connection.zcard(this.#submissionsDueKey);
  }

  async close(): Promise<void> {
    await Promise.all([this.#events.close(), this.#resolves.close()]);
    await this.#connection.quit().catch(() => this.#connection.disconnect());
  }
}

/** Polls every 5 ms until change events are written; resolves with their count, throws after `timeoutMs`. */
export async function firstWritten(probe: ChangeEventsProbe, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const written = await probe.written();
    if (written > 0) return written;
    if (Date.now() > deadline) throw new Error(`no change event written within ${timeoutMs / 1000} s`);
    await sleep(5);
  }
}

/** Waits until no range is resolving, twice in a row 500 ms apart; `resolved` is false after `timeoutMs`. */
export async function waitUntilResolved(probe: ChangeEventsProbe, timeoutMs: number): Promise<{ resolved: boolean; waitedMs: number }> {
  const startedAtMs = Date.now();
  let idlePolls = 0;
  for (;;) {
    idlePolls = (await probe.resolving()) ? 0 : idlePolls + 1;
    const waitedMs = Date.now() - startedAtMs;
    if (idlePolls >= 2) return { resolved: true, waitedMs };
    if (waitedMs > timeoutMs) return { resolved: false, waitedMs };
    await sleep(500);
  }
}

/** What the change events in Redis say of features added to a layer. */
export interface ChangeVerdict {
  /** Change events in Redis. */
  events: number;
  /** Features of the layer with a `change.created` event (distinct `key.objectId`). */
  features: number;
  /** `change.created` events beyond one per feature. */
  duplicated: number;
  /** Events that are no create of a feature of the layer (another type, another layer, no object id). */
  strangers: number;
}

/** Every job of `change-events` under `prefix`, in any state, by id (a job listed in two states is one event), read a page at a time. */
export async function readChangeEvents(redisUrl: string, prefix: string): Promise<Map<string, unknown>> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(changeEventsQueueName, { connection, prefix });
  try {
    const events = new Map<string, unknown>();
    for (let start = 0; ; start += PAGE) {
      const jobs = await queue.getJobs(allStates, start, start + PAGE - 1);
      if (jobs.length === 0) break;
      for (const job of jobs) events.set(job.id ?? '', job.data ?? {});
    }
    return events;
  } finally {
    await queue.close();
    await connection.quit().catch(() => connection.disconnect());
  }
}

/** Reads every change event under `prefix` and counts the features created in `layerId`. */
export async function judgeChangeEvents(redisUrl: string, prefix: string, layerId: number): Promise<ChangeVerdict> {
  const events = (await readChangeEvents(redisUrl, prefix)) as Map<string, Partial<ChangeEvent>>;
  const objectIds = new Set<string>();
  let created = 0;
  for (const event of events.values()) {
    if (event.type !== 'change.created' || event.layer?.id !== layerId || event.key?.objectId === undefined) continue;
    created += 1;
    objectIds.add(String(event.key.objectId));
  }
  return { events: events.size, features: objectIds.size, duplicated: created - objectIds.size, strangers: events.size - created };
}
