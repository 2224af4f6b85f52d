import { createRequire } from 'node:module';
import { Job, type Queue } from 'bullmq';
import type { Result } from 'ioredis';
import { GeohookError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';
import { activityField, type ServiceActivity } from './service-activity.js';
import type { TrackedRange } from './tracked-ranges.js';

// BullMQ's script texts and version are not in its public exports (nor typed): read from the package.
const require = createRequire(import.meta.url);
const { addStandardJob } = require('bullmq/dist/cjs/scripts/addStandardJob-9.js') as { addStandardJob: { content: string } };
const { version: bullmqVersion } = require('bullmq/package.json') as { version: string };

/**
 * The BullMQ release whose job layout the accept script writes. `test/queue/job-script.test.ts` proves,
 * against this release, that a job so written equals one written by `queue.add` field by field; a
 * different release is refused at start-up rather than trusted.
 */
export const BULLMQ_VERSION = '6.7.0';

/** The lines of BullMQ's script that read its msgpacked arguments; the accept script passes them as tables. */
const ARGS_LINE = 'local args = cmsgpack.unpack(ARGV[1])';
const OPTS_LINE = 'local opts = cmsgpack.unpack(ARGV[3])';

/** Keys of one queue that BullMQ's `addStandardJob` takes, in its order (after the queue's key prefix). */
const QUEUE_KEYS = ['wait', 'paused', 'meta', 'id', 'completed', 'delayed', 'active', 'events', 'marker'] as const;

/** Values per event in ARGV. */
const PER_EVENT = 7;

/** Queues the script writes to: the three event queues, then the backfill queue. */
const QUEUES = 4;

/** Values in ARGV before the events': five settings, then the key prefix of each queue. */
const HEADER = 5 + QUEUES;

/**
 * BullMQ's own `addStandardJob` script, as the body of a Lua function called once per new event.
 * Throws when the pinned release is not the one installed or its script no longer reads its arguments
 * the way this wrapper replaces.
 */
function bullmqAddJobFunction(): string {
  if (bullmqVersion !== BULLMQ_VERSION) {
    throw new GeohookError(
      'GEOHOOK_ERR_CONFIG',
      `geohook writes jobs in the layout of bullmq ${BULLMQ_VERSION}, but bullmq ${bullmqVersion} is installed: install ${BULLMQ_VERSION}`,
    );
  }
  const body = addStandardJob.content.replace(ARGS_LINE, 'local args = ARGS_').replace(OPTS_LINE, 'local opts = OPTS_');
  if (!body.includes('= ARGS_') || !body.includes('= OPTS_')) {
    throw new GeohookError('GEOHOOK_ERR_CONFIG', `bullmq ${bullmqVersion}'s addStandardJob no longer reads its arguments as expected`);
  }
  return `local addStandardJob = function(KEYS, ARGV, ARGS_, OPTS_)\n${body}\nend`;
}

/**
 * The acknowledgement's write, for a batch of accepted events (see `JobWriter`): one script call that,
 * per event, answers a repeat from the hook's dedup key, or from the watermarks when every range of server
 * generations the event covers was handed over already (docs/backfill.md), or else writes the BullMQ job
 * (through BullMQ's own `addStandardJob`, so the job is exactly what `queue.add` would have made) and
 * advances the watermarks. A range that starts past its watermark leaves a gap: a job on the backfill queue
 * (id `gap-<sha1>` of scope and gap, once) for the generations in between. The job id is the event id, unless
 * a job already holds it (the same bytes on another hook, or a job kept past the window): then
 * `<event id>-<hook>-<time>`.
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
${bullmqAddJobFunction()}
local dedupMs, timestamp, time36 = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local opts = cmsgpack.unpack(ARGV[4])
-- The backfill queue's options, unpacked at the call's first gap.
local gapOpts
local watermarks, activity = KEYS[1], KEYS[2]
local QUEUE_KEYS = { ${QUEUE_KEYS.map((key) => `'${key}'`).join(', ')} }
-- Queue q (1-3 the event queues, ${QUEUES} the backfill queue): its key prefix and addStandardJob keys, made at first use.
local queues = {}
local function queueOf(q)
  local queue = queues[q]
  if not queue then
    local prefix = ARGV[${HEADER - QUEUES} + q]
    local keys = {}
    for k, key in ipairs(QUEUE_KEYS) do keys[k] = prefix .. key end
    queue = { keys = keys, prefix = prefix }
    queues[q] = queue
  end
  return queue
end
local RANGE = '([^\\t\\n]+)\\t(%d+)\\t(%d+)\\t([^\\t\\n]*)\\t([^\\n]*)'
-- True when some range ends past its watermark (or has none yet).
local function fresh(ranges)
  if ranges == '' then return true end
  for scope, _, to in string.gmatch(ranges, RANGE) do
    local mark = redis.call('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then return true end
  end
  return false
end
local function advance(ranges, hook)
  for scope, from, to, url, source in string.gmatch(ranges, RANGE) do
    local mark = redis.call('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then
      if mark and tonumber(from) > tonumber(mark) then
        local jobId = 'gap-' .. redis.sha1hex(scope .. '\\t' .. mark .. '\\t' .. from)
        local gaps = queueOf(${QUEUES})
        if redis.call('EXISTS', gaps.prefix .. jobId) == 0 then
          gapOpts = gapOpts or cmsgpack.unpack(ARGV[5])
          gapOpts['jobId'] = jobId
          local gap = { scope = scope, hook = hook, serviceUrl = url, from = mark, to = from }
          if source ~= '' then gap['source'] = source end
          local data = cjson.encode(gap)
          addStandardJob(gaps.keys, { nil, data }, { gaps.prefix, jobId, 'gap', timestamp }, gapOpts)
        end
      end
      redis.call('HSET', watermarks, scope, to)
    end
  end
end
local answers = {}
for i = 0, (#ARGV - ${HEADER}) / ${PER_EVENT} - 1 do
  local a = ${HEADER} + i * ${PER_EVENT}
  local q = tonumber(ARGV[a + 1])
  local queue, eventId, hook, ranges = q > 0 and queueOf(q) or nil, ARGV[a + 2], ARGV[a + 3], ARGV[a + 6]
  local dedupKey = queue and (queue.prefix .. 'de:' .. hook .. ':' .. eventId)
  if ARGV[a + 7] ~= '' then redis.call('HSET', activity, ARGV[a + 7], timestamp) end
  -- One look for the hook's dedup key and a job holding the event id; the dedup key alone when one is there.
  local found = queue and redis.call('EXISTS', dedupKey, queue.prefix .. eventId)
  if not queue then
    advance(ranges, hook)
    answers[i + 1] = 1
  elseif found == 2 or (found == 1 and redis.call('EXISTS', dedupKey) == 1) then
    answers[i + 1] = 0
  elseif not fresh(ranges) then
    answers[i + 1] = 2
  else
    local jobId = found == 0 and eventId or (eventId .. '-' .. hook .. '-' .. time36)
    opts['jobId'] = jobId
    addStandardJob(queue.keys, { nil, ARGV[a + 5] }, { queue.prefix, jobId, ARGV[a + 4], timestamp }, opts)
    -- Only a complete job marks the event seen: when Redis fails the script midway, the retry writes it. The
    -- key's presence is the mark; 1 is Redis's smallest value (a shared integer) for the 24 h it is kept.
    redis.call('SET', dedupKey, 1, 'PX', dedupMs)
    advance(ranges, hook)
    answers[i + 1] = 1
  end
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
 * its script: captured by running BullMQ's own job insert against a client that only records the call
 * (BullMQ makes the call synchronously, before its first await).
 */
function encodedJobOptions(queue: Queue): Buffer {
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
