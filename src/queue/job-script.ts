import { hash } from 'node:crypto';
import type { JobsOptions, Queue } from 'bullmq';
import type { Result } from 'ioredis';
import { bullmq } from '../commonjs/bullmq.js';
import { requireDependency } from '../commonjs/require-dependency.js';
import { GeohookError } from '../errors.js';
import { activityField, type ServiceActivity } from '../events/service-activity.js';
import type { TrackedRange } from '../events/tracked-ranges.js';
import type { RedisClient } from '../redis/connection.js';
import { activityKey, aheadKey, changesOriginsKey, dedupKey, gapsKey, eventLogKey, serverGensKey, watermarksKey } from '../redis/keys.js';
import { acceptLua, Operation } from './accept-script.js';
import { confirmJobOptions } from './backfill-jobs.js';

// BullMQ's version is not in its public exports: read from the package.
const { version: bullmqVersion } = requireDependency('bullmq/package.json') as { version: string };

/**
 * The BullMQ release whose job layout the accept script writes. `test/queue/job-script.test.ts` proves,
 * against this release, that jobs so written equal those written by `queue.add` field by field; a
 * different release is refused at start-up rather than trusted.
 */
export const BULLMQ_VERSION = '6.7.0';

/** Job options the script's layout does not cover: BullMQ writes such jobs elsewhere or differently. */
const UNSUPPORTED_OPTIONS: readonly (keyof JobsOptions)[] = [
  'delay',
  'priority',
  'lifo',
  'parent',
  'deduplication',
  'timestamp',
  'jobId',
  'repeatJobKey',
  'prevMillis',
  'sizeLimit',
];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `numberOfKeys` first: 7, the watermarks, the activity, the server generations, the ranges ahead, the gaps, the event log and the watermarks' origins. */
    geohookAcceptJobs(numberOfKeys: number, ...keysAndArgs: (string | number | Buffer)[]): Result<(number | string)[], Context>;
  }
}

/** An event to write, with what it hands over. */
export interface EventWrite {
  /** Index of its queue among those given to {@link JobScript}. */
  queue: number;
  /** The event id: the job id unless a job already holds it. */
  eventId: string;
  /** The hook it came to: the dedup key is per hook. */
  hook: string;
  /** Job name: the event type. */
  name: string;
  /** Job data: the stored event as JSON. */
  data: string;
  /** The server generations it hands over (feature deliveries), checked against and advancing the watermarks. */
  ranges: readonly TrackedRange[];
  /** What it tells of its service, recorded with the time. */
  activity: ServiceActivity | undefined;
}

/** Ranges alone, without an event. */
export interface RangesWrite {
  /**
   * `reserve`: ranges the server reported itself, they count; `confirm`: the server's generation of each range's
   * scope, read to confirm the ranges waiting ahead of it.
   */
  operation: 'reserve' | 'confirm';
  hook: string;
  ranges: readonly TrackedRange[];
  /** What it tells of its service (a poll), recorded with the time. */
  activity?: ServiceActivity;
  /** `confirm`: a range still ahead that was first seen before this time (epoch ms) is refused. */
  refuseBefore?: number;
}

/** One request of a script call. */
export type JobRequest = EventWrite | RangesWrite;

/** The ranges as the script reads them. */
const rangeLines = (ranges: readonly TrackedRange[]): string =>
  ranges.map(({ scope, from, to, serviceUrl, source = '' }) => `${scope}\t${from}\t${to}\t${serviceUrl}\t${source}`).join('\n');

/** A job id BullMQ's encoding of the options is captured with; replaced per job inside the script. */
const TEMPLATE_ID = 'geohook-template';

/**
 * BullMQ's encoding of `queue`'s default job options with a job id (and a delay, ms, when one is given), exactly
 * as `queue.add` sends it to its script (refused when the options are beyond the script's layout): captured by
 * running BullMQ's own job insert against a client that only records the call (BullMQ makes the call
 * synchronously, before its first await).
 */
export function encodedJobOptions(queue: Queue, jobOptions: JobsOptions = queue.defaultJobOptions, delay = 0): Buffer {
  const unsupported = UNSUPPORTED_OPTIONS.filter((option) => jobOptions[option] !== undefined);
  if (unsupported.length > 0)
    throw new GeohookError(
      'GEOHOOK_ERR_CONFIG',
      `the accept script cannot write jobs with ${unsupported.join(', ')} (queue ${queue.name})`,
    );
  const job = new bullmq.Job(
    queue,
    TEMPLATE_ID,
    undefined,
    { ...jobOptions, jobId: TEMPLATE_ID, ...(delay > 0 ? { delay } : {}) },
    TEMPLATE_ID,
  );
  let options: unknown;
  const recorder = {
    runCommand(_command: string, args: unknown[]): Promise<string> {
      options = args[args.length - 1];
      return Promise.resolve(TEMPLATE_ID);
    },
  };
  job.addJob(recorder as never).catch(() => undefined);
  if (!Buffer.isBuffer(options))
    throw new GeohookError('GEOHOOK_ERR_CONFIG', `bullmq ${bullmqVersion} did not hand over its encoded job options`);
  return options;
}

/**
 * The Redis keys the accept script works with under `prefix`: watermarks, activity, server generations, ranges ahead,
 * gaps, event log, the watermarks' origins, dedup keys.
 */
export function scriptKeys(prefix: string): ScriptKeys {
  return {
    eventLogKey: eventLogKey(prefix),
    watermarksKey: watermarksKey(prefix),
    activityKey: activityKey(prefix),
    serverGensKey: serverGensKey(prefix),
    aheadKey: aheadKey(prefix),
    gapsKey: gapsKey(prefix),
    originsKey: changesOriginsKey(prefix),
    dedupKeyPrefix: dedupKey(prefix, ''),
  };
}

/** The Redis keys the accept script works with. */
export type ScriptKeys = Pick<
  JobScriptOptions,
  'watermarksKey' | 'activityKey' | 'serverGensKey' | 'aheadKey' | 'gapsKey' | 'eventLogKey' | 'originsKey' | 'dedupKeyPrefix'
>;

/** Options of {@link JobScript}. */
export interface JobScriptOptions {
  /** The three event queues, in the order {@link JobRequest.queue} counts; they share their default job options. */
  queues: readonly Queue[];
  /** Where gaps go, one job each, and the jobs that confirm ranges ahead of their server. */
  backfillQueue: Queue;
  /** The hash of watermarks, by scope. */
  watermarksKey: string;
  /** The hash of what last happened to each service. */
  activityKey: string;
  /** The hash of each scope's server generation, as its server last reported it. */
  serverGensKey: string;
  /** The hash of the ranges waiting for their server to confirm them, by scope. */
  aheadKey: string;
  /** The hash of the gaps a delivery may still fill, by scope. */
  gapsKey: string;
  /** The stream each new event is appended to, for the fan-out to relay routes and subscriptions. */
  eventLogKey: string;
  /** The hash of how each scope's generations reached geohook (webhook, backfill, poll), read by change events. */
  originsKey: string;
  /** What every dedup key begins with: `<prefix>:de:` (see `dedupKey`). */
  dedupKeyPrefix: string;
  /** How long an event id is remembered per hook, ms. */
  dedupMs: number;
  /** How long a gap a delivery revealed waits before a worker may take it, ms (0: none). @defaultValue 0 */
  gapDelayMs?: number;
}

/**
 * The dedup digest of an event on a hook: 16 bytes of the SHA-256 of both, the end of its dedup key. 128 bits keep
 * an accidental collision out of reach, and a chosen one would need a second preimage.
 */
export const dedupDigest = (hook: string, eventId: string): Buffer => hash('sha256', `${hook}\n${eventId}`, 'buffer').subarray(0, 16);

/** What every call of the script sends besides the time and its requests (its KEYS, ARGV 1 and 4 to 13), bound once. */
interface ScriptBinding {
  keys: string[];
  dedupMs: number;
  options: Buffer;
  gapOptions: Buffer;
  confirmOptions: Buffer;
  delayedGapOptions: Buffer;
  gapDelayMs: number;
  dedupKeyPrefix: string;
  /** The key prefixes of the three event queues and of the backfill queue. */
  queuePrefixes: string[];
}

/** The script's keys, in the order of its KEYS. */
const keysOf = (options: ScriptKeys): string[] => [
  options.watermarksKey,
  options.activityKey,
  options.serverGensKey,
  options.aheadKey,
  options.gapsKey,
  options.eventLogKey,
  options.originsKey,
];

/** Refuses a BullMQ release other than {@link BULLMQ_VERSION}, and defines the script's command on `connection`. */
function defineScript(connection: RedisClient): void {
  if (bullmqVersion !== BULLMQ_VERSION) {
    throw new GeohookError(
      'GEOHOOK_ERR_CONFIG',
      `geohook writes jobs in the layout of bullmq ${BULLMQ_VERSION}, but bullmq ${bullmqVersion} is installed: install ${BULLMQ_VERSION}`,
    );
  }
  if (typeof connection.geohookAcceptJobs !== 'function') connection.defineCommand('geohookAcceptJobs', { lua: acceptLua });
}

/** Sends `requests` to the script in one call, in order. */
function callScript(connection: RedisClient, binding: ScriptBinding, requests: readonly JobRequest[]): Promise<(number | string)[]> {
  const now = Date.now();
  const args: (string | number | Buffer)[] = [
    binding.dedupMs,
    now,
    now.toString(36),
    binding.options,
    binding.gapOptions,
    binding.confirmOptions,
    binding.delayedGapOptions,
    binding.gapDelayMs,
    binding.dedupKeyPrefix,
    ...binding.queuePrefixes,
  ];
  // Every activity of a call gets the same time: each field is sent once, with its first event.
  const activities = new Set<string>();
  for (const request of requests) {
    const { hook, ranges, activity } = request;
    const field = activity === undefined ? '' : activityField(activity);
    const fresh = field !== '' && !activities.has(field);
    if (fresh) activities.add(field);
    const lines = ranges.length === 0 ? '' : rangeLines(ranges);
    if ('operation' in request) {
      const refuseBefore = request.refuseBefore === undefined ? '' : String(request.refuseBefore);
      args.push(Operation[request.operation], '', hook, '', refuseBefore, lines, fresh ? field : '', '');
    } else {
      const digest = dedupDigest(hook, request.eventId);
      args.push(request.queue + 1, request.eventId, hook, request.name, request.data, lines, fresh ? field : '', digest);
    }
  }
  return connection.geohookAcceptJobs(binding.keys.length, ...binding.keys, ...args);
}

/** The accept script bound to its queues, watermarks and dedup window. */
export class JobScript {
  readonly #connection: RedisClient;
  readonly #binding: ScriptBinding;

  constructor(connection: RedisClient, options: JobScriptOptions) {
    defineScript(connection);
    this.#connection = connection;
    const gapDelayMs = options.gapDelayMs ?? 0;
    const { backfillQueue } = options;
    this.#binding = {
      keys: keysOf(options),
      dedupMs: options.dedupMs,
      options: encodedJobOptions(options.queues[0]!),
      gapOptions: encodedJobOptions(backfillQueue),
      confirmOptions: encodedJobOptions(backfillQueue, confirmJobOptions),
      delayedGapOptions: encodedJobOptions(backfillQueue, backfillQueue.defaultJobOptions, gapDelayMs),
      gapDelayMs,
      dedupKeyPrefix: options.dedupKeyPrefix,
      queuePrefixes: [...options.queues, backfillQueue].map((queue) => queue.toKey('')),
    };
  }

  /**
   * Writes `requests` in order, sending the call at once: one answer each, as the script gives it (see
   * `accept-script.ts`): 1 for a new job, 0 for a repeat within the window, 2 for a range handed over already;
   * a `confirm` request's `<ranges still ahead>\n<refused ranges>`.
   */
  write(requests: readonly JobRequest[]): Promise<(number | string)[]> {
    return callScript(this.#connection, this.#binding, requests);
  }
}

/** An event that hands nothing over: no ranges of server generations, no activity (a change event). */
export type PlainEvent = Pick<EventWrite, 'eventId' | 'hook' | 'name' | 'data'>;

/** Options of {@link QueueScript}. */
export interface QueueScriptOptions {
  /** The one queue its events go to. */
  queue: Queue;
  /** The key prefix of the accept script's keys (see {@link scriptKeys}). */
  prefix: string;
  /** How long an event id is remembered per hook, ms. */
  dedupMs: number;
}

/**
 * The accept script for one queue of events that hand nothing over (change events): per event, a repeat within the
 * dedup window, or a new job appended to the event log. It writes no gap or confirm job: it has no backfill queue,
 * and the slots of the other queues are left empty.
 */
export class QueueScript {
  readonly #connection: RedisClient;
  readonly #binding: ScriptBinding;

  constructor(connection: RedisClient, options: QueueScriptOptions) {
    defineScript(connection);
    this.#connection = connection;
    const none = Buffer.alloc(0);
    this.#binding = {
      keys: keysOf(scriptKeys(options.prefix)),
      dedupMs: options.dedupMs,
      options: encodedJobOptions(options.queue),
      gapOptions: none,
      confirmOptions: none,
      delayedGapOptions: none,
      gapDelayMs: 0,
      dedupKeyPrefix: dedupKey(options.prefix, ''),
      queuePrefixes: [options.queue.toKey(''), '', '', ''],
    };
  }

  /** Writes `events` to the queue in order, in one call: per event, 1 for a new job, 0 for a repeat within the window. */
  async write(events: readonly PlainEvent[]): Promise<number[]> {
    const requests = events.map((event): EventWrite => ({ ...event, queue: 0, ranges: [], activity: undefined }));
    return (await callScript(this.#connection, this.#binding, requests)) as number[];
  }
}
