import { createRequire } from 'node:module';
import { Job, type JobsOptions, type Queue } from 'bullmq';
import type { Result } from 'ioredis';
import { GeohookError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { activityField, type ServiceActivity } from './service-activity.js';
import type { TrackedRange } from './tracked-ranges.js';

// BullMQ's version is not in its public exports: read from the package.
const require = createRequire(import.meta.url);
const { version: bullmqVersion } = require('bullmq/package.json') as { version: string };

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

/** Queues the script writes to: the three event queues, then the backfill queue. */
const QUEUES = 4;

/** Values per event in ARGV. */
const PER_EVENT = 7;

/** Values in ARGV before the events': five settings, then the key prefix of each queue. */
const HEADER = 5 + QUEUES;

/**
 * The acknowledgement's write, for a batch of accepted events (see `JobWriter`): one script call that,
 * per event, answers a repeat from the hook's dedup key, or from the watermarks when every range of server
 * generations the event covers was handed over already (docs/backfill.md), or else writes the BullMQ job and
 * advances the watermarks. A range that starts past its watermark leaves a gap: a job on the backfill queue
 * (id `gap-<sha1>` of scope and gap, once) for the generations in between. The job id is the event id, unless
 * a job already holds it (the same bytes on another hook, or a job kept past the window): then
 * `<event id>-<hook>-<time>`.
 *
 * The jobs are those BullMQ's `addStandardJob` writes for a job with an id of its own (and none of
 * {@link UNSUPPORTED_OPTIONS}): the hash (`name`, `data`, `opts` as `cjson` encodes them, `timestamp`,
 * `delay`, `priority`), `added` and `waiting` on the events stream, the id on the wait list, the marker unless
 * the queue is paused or at its concurrency, and the job counter raised. What BullMQ looks up per job (the
 * queue's meta) is looked up once per queue and call, and the counter raised once by the call's count.
 *
 * Each request may also name an activity (`<what>\t<service>`, see {@link ServiceActivity}): its field of the
 * activity hash is set to the time, whatever the answer, so that the services view shows when a service last
 * delivered, was backfilled or was polled.
 *
 * KEYS: the watermarks hash and the activity hash. The queues' keys are made in the script from their key
 * prefixes (as BullMQ's own scripts make a job's keys): on a Redis Cluster they share the prefix's hash tag.
 * ARGV: 1 dedup window (ms), 2 the time (ms), 3 the same in base 36, 4 BullMQ's msgpacked job options,
 * 5 those of the backfill queue, 6-9 the key prefixes (`<prefix>:<queue>:`) of the three event queues and
 * the backfill queue, then seven per event: queue (1-3, the order of those prefixes; 0 for no event: the
 * ranges alone), event id, hook, job name, job data, ranges (`scope\tfrom\tto\tserviceUrl\tsource` lines; empty for
 * none), activity (empty for none).
 * Returns one number per event: 0 for a repeat, 1 for a new job, 2 for a range handed over already.
 */
const acceptLua = `
local rcall = redis.call
local dedupMs, timestamp, time36 = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local watermarks, activity = KEYS[1], KEYS[2]
-- Job options, unpacked at first use: the event queues share theirs, the backfill queue has its own.
local options = {}
-- Queue q (1-3 the event queues, ${QUEUES} the backfill queue), made at first use.
local queues = {}
local function queueOf(q)
  local queue = queues[q]
  if not queue then
    local prefix = ARGV[${HEADER - QUEUES} + q]
    local optionsArg = q == ${QUEUES} and 5 or 4
    options[optionsArg] = options[optionsArg] or cmsgpack.unpack(ARGV[optionsArg])
    queue = { prefix = prefix, opts = options[optionsArg], events = prefix .. 'events', added = 0 }
    queues[q] = queue
  end
  return queue
end
-- BullMQ's addStandardJob for a job with an id of its own.
local function addJob(queue, jobId, name, data)
  local prefix = queue.prefix
  if queue.added == 0 then
    local meta = prefix .. 'meta'
    queue.maxEvents = rcall('HGET', meta, 'opts.maxLenEvents')
    if not queue.maxEvents then
      queue.maxEvents = 10000
      rcall('HSET', meta, 'opts.maxLenEvents', queue.maxEvents)
    end
    local attributes = rcall('HMGET', meta, 'paused', 'concurrency')
    local held = attributes[1] and true or (attributes[2] and rcall('LLEN', prefix .. 'active') >= tonumber(attributes[2]))
    if not held then rcall('ZADD', prefix .. 'marker', 0, '0') end
  end
  queue.opts['jobId'] = jobId
  rcall('HMSET', prefix .. jobId, 'name', name, 'data', data, 'opts', cjson.encode(queue.opts), 'timestamp', timestamp, 'delay', 0, 'priority', 0)
  rcall('XADD', queue.events, '*', 'event', 'added', 'jobId', jobId, 'name', name)
  rcall('LPUSH', prefix .. 'wait', jobId)
  rcall('XADD', queue.events, 'MAXLEN', '~', queue.maxEvents, '*', 'event', 'waiting', 'jobId', jobId)
  queue.added = queue.added + 1
end
local RANGE = '([^\\t\\n]+)\\t(%d+)\\t(%d+)\\t([^\\t\\n]*)\\t([^\\n]*)'
-- True when some range ends past its watermark (or has none yet).
local function fresh(ranges)
  if ranges == '' then return true end
  for scope, _, to in string.gmatch(ranges, RANGE) do
    local mark = rcall('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then return true end
  end
  return false
end
local function advance(ranges, hook)
  for scope, from, to, url, source in string.gmatch(ranges, RANGE) do
    local mark = rcall('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then
      if mark and tonumber(from) > tonumber(mark) then
        local jobId = 'gap-' .. redis.sha1hex(scope .. '\\t' .. mark .. '\\t' .. from)
        local gaps = queueOf(${QUEUES})
        if rcall('EXISTS', gaps.prefix .. jobId) == 0 then
          local gap = { scope = scope, hook = hook, serviceUrl = url, from = mark, to = from }
          if source ~= '' then gap['source'] = source end
          addJob(gaps, jobId, 'gap', cjson.encode(gap))
        end
      end
      rcall('HSET', watermarks, scope, to)
    end
  end
end
local answers = {}
for i = 0, (#ARGV - ${HEADER}) / ${PER_EVENT} - 1 do
  local a = ${HEADER} + i * ${PER_EVENT}
  local q = tonumber(ARGV[a + 1])
  local queue, eventId, hook, ranges = q > 0 and queueOf(q) or nil, ARGV[a + 2], ARGV[a + 3], ARGV[a + 6]
  local dedupKey = queue and (queue.prefix .. 'de:' .. hook .. ':' .. eventId)
  if ARGV[a + 7] ~= '' then rcall('HSET', activity, ARGV[a + 7], timestamp) end
  -- One look for the hook's dedup key and a job holding the event id; the dedup key alone when one is there.
  local found = queue and rcall('EXISTS', dedupKey, queue.prefix .. eventId)
  if not queue then
    advance(ranges, hook)
    answers[i + 1] = 1
  elseif found == 2 or (found == 1 and rcall('EXISTS', dedupKey) == 1) then
    answers[i + 1] = 0
  elseif not fresh(ranges) then
    answers[i + 1] = 2
  else
    addJob(queue, found == 0 and eventId or (eventId .. '-' .. hook .. '-' .. time36), ARGV[a + 4], ARGV[a + 5])
    -- Only a complete job marks the event seen: when Redis fails the script midway, the retry writes it. The
    -- key's presence is the mark; 1 is Redis's smallest value (a shared integer) for the 24 h it is kept.
    rcall('SET', dedupKey, 1, 'PX', dedupMs)
    advance(ranges, hook)
    answers[i + 1] = 1
  end
end
for _, queue in pairs(queues) do
  if queue.added > 0 then rcall('INCRBY', queue.prefix .. 'id', queue.added) end
end
return answers
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `numberOfKeys` first: 2, the watermarks and the activity hash. */
    geohookAcceptJobs(numberOfKeys: number, ...keysAndArgs: (string | number | Buffer)[]): Result<number[], Context>;
  }
}

/** One event to write. */
export interface JobRequest {
  /** Index of its queue among those given to {@link JobScript}; -1 for ranges alone (no job). */
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

/** The ranges as the script reads them. */
const rangeLines = (ranges: readonly TrackedRange[]): string =>
  ranges.map(({ scope, from, to, serviceUrl, source = '' }) => `${scope}\t${from}\t${to}\t${serviceUrl}\t${source}`).join('\n');

/** A job id BullMQ's encoding of the options is captured with; replaced per job inside the script. */
const TEMPLATE_ID = 'geohook-template';

/**
 * BullMQ's encoding of `queue`'s default job options with a job id, exactly as `queue.add` sends it to
 * its script (refused when the options are beyond the script's layout): captured by running BullMQ's own
 * job insert against a client that only records the call (BullMQ makes the call synchronously, before its
 * first await).
 */
function encodedJobOptions(queue: Queue): Buffer {
  const unsupported = UNSUPPORTED_OPTIONS.filter((option) => queue.defaultJobOptions[option] !== undefined);
  if (unsupported.length > 0)
    throw new GeohookError(
      'GEOHOOK_ERR_CONFIG',
      `the accept script cannot write jobs with ${unsupported.join(', ')} (queue ${queue.name})`,
    );
  const job = new Job(queue, TEMPLATE_ID, undefined, { ...queue.defaultJobOptions, jobId: TEMPLATE_ID }, TEMPLATE_ID);
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

/** Options of {@link JobScript}. */
export interface JobScriptOptions {
  /** The three event queues, in the order {@link JobRequest.queue} counts; they share their default job options. */
  queues: readonly Queue[];
  /** Where gaps go, one job each. */
  backfillQueue: Queue;
  /** The hash of watermarks, by scope. */
  watermarksKey: string;
  /** The hash of what last happened to each service. */
  activityKey: string;
  /** How long an event id is remembered per hook, ms. */
  dedupMs: number;
}

/** The accept script bound to its queues, watermarks and dedup window. */
export class JobScript {
  private readonly connection: RedisClient;
  private readonly keys: string[];
  private readonly queuePrefixes: string[];
  private readonly dedupMs: number;
  private readonly options: Buffer;
  private readonly gapOptions: Buffer;

  constructor(connection: RedisClient, options: JobScriptOptions) {
    if (bullmqVersion !== BULLMQ_VERSION) {
      throw new GeohookError(
        'GEOHOOK_ERR_CONFIG',
        `geohook writes jobs in the layout of bullmq ${BULLMQ_VERSION}, but bullmq ${bullmqVersion} is installed: install ${BULLMQ_VERSION}`,
      );
    }
    if (typeof connection.geohookAcceptJobs !== 'function') connection.defineCommand('geohookAcceptJobs', { lua: acceptLua });
    this.connection = connection;
    this.keys = [options.watermarksKey, options.activityKey];
    this.queuePrefixes = [...options.queues, options.backfillQueue].map((queue) => queue.toKey(''));
    this.dedupMs = options.dedupMs;
    this.options = encodedJobOptions(options.queues[0]!);
    this.gapOptions = encodedJobOptions(options.backfillQueue);
  }

  /**
   * Writes `requests` in order, sending the call at once: one answer each, true for a new job, false for a
   * repeat within the window or a range handed over already.
   */
  write(requests: readonly JobRequest[]): Promise<boolean[]> {
    const now = Date.now();
    const args: (string | number | Buffer)[] = [this.dedupMs, now, now.toString(36), this.options, this.gapOptions, ...this.queuePrefixes];
    // Every activity of a call gets the same time: each field is sent once, with its first event.
    const activities = new Set<string>();
    for (const { queue, eventId, hook, name, data, ranges, activity } of requests) {
      const field = activity === undefined ? '' : activityField(activity);
      const fresh = field !== '' && !activities.has(field);
      if (fresh) activities.add(field);
      args.push(queue + 1, eventId, hook, name, data, ranges.length === 0 ? '' : rangeLines(ranges), fresh ? field : '');
    }
    return this.connection
      .geohookAcceptJobs(this.keys.length, ...this.keys, ...args)
      .then((answers) => answers.map((answer) => answer === 1));
  }
}
