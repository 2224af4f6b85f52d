import { createRequire } from 'node:module';
import { Job, type Queue } from 'bullmq';
import type { Result } from 'ioredis';
import { GeohookError } from '../errors.js';
import type { RedisClient } from '../redis/connection.js';

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

/** Keys of one queue that BullMQ's `addStandardJob` takes, in its order. */
const QUEUE_KEYS = ['wait', 'paused', 'meta', 'id', 'completed', 'delayed', 'active', 'events', 'marker'] as const;

/** Values per event in ARGV. */
const PER_EVENT = 5;

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
 * per event, answers a repeat from the hook's dedup key or else writes the BullMQ job (through
 * BullMQ's own `addStandardJob`, so the job is exactly what `queue.add` would have made). The job id is the
 * event id, unless a job already holds it (the same bytes on another hook, or a job kept past the window):
 * then `<event id>-<hook>-<time>`.
 *
 * KEYS: the nine `addStandardJob` keys of each of the three queues (27).
 * ARGV: 1 dedup window (ms), 2 the time (ms), 3 the same in base 36, 4 BullMQ's msgpacked job options,
 * then five per event: queue (1-3, the order of KEYS), event id, hook, job name, job data.
 * Returns one number per event: 0 for a repeat, 1 for a new job.
 */
const acceptLua = `
${bullmqAddJobFunction()}
local dedupMs, timestamp, time36 = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local opts = cmsgpack.unpack(ARGV[4])
local queues = {}
for q = 0, 2 do
  local keys = {}
  for k = 1, 9 do keys[k] = KEYS[q * 9 + k] end
  queues[q + 1] = { keys = keys, prefix = string.sub(keys[1], 1, -5) }
end
local answers = {}
for i = 0, (#ARGV - 4) / ${PER_EVENT} - 1 do
  local a = 4 + i * ${PER_EVENT}
  local queue, eventId, hook = queues[tonumber(ARGV[a + 1])], ARGV[a + 2], ARGV[a + 3]
  local dedupKey = queue.prefix .. 'de:' .. hook .. ':' .. eventId
  if redis.call('EXISTS', dedupKey) == 1 then
    answers[i + 1] = 0
  else
    local jobId = eventId
    if redis.call('EXISTS', queue.prefix .. jobId) == 1 then jobId = eventId .. '-' .. hook .. '-' .. time36 end
    opts['jobId'] = jobId
    addStandardJob(queue.keys, { nil, ARGV[a + 5] }, { queue.prefix, jobId, ARGV[a + 4], timestamp }, opts)
    -- Only a complete job marks the event seen: when Redis fails the script midway, the retry writes it.
    redis.call('SET', dedupKey, jobId, 'PX', dedupMs)
    answers[i + 1] = 1
  end
end
return answers
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `numberOfKeys` first: 27, the keys of the three queues. */
    geohookAcceptJobs(numberOfKeys: number, ...keysAndArgs: (string | number | Buffer)[]): Result<number[], Context>;
  }
}

/** One event to write. */
export interface JobRequest {
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
}

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

/** The accept script bound to three queues (same default job options) and a dedup window. */
export class JobScript {
  private readonly connection: RedisClient;
  private readonly keys: string[];
  private readonly dedupMs: number;
  private readonly options: Buffer;

  /** `queues` (in the order {@link JobRequest.queue} counts) share their default job options. */
  constructor(connection: RedisClient, queues: readonly Queue[], dedupMs: number) {
    if (typeof connection.geohookAcceptJobs !== 'function') connection.defineCommand('geohookAcceptJobs', { lua: acceptLua });
    this.connection = connection;
    this.keys = queues.flatMap((queue) => QUEUE_KEYS.map((key) => queue.toKey(key)));
    this.dedupMs = dedupMs;
    this.options = encodedJobOptions(queues[0]!);
  }

  /**
   * Writes `requests` in order, sending the call at once: one answer each, true for a new job, false for a
   * repeat within the window.
   */
  write(requests: readonly JobRequest[]): Promise<boolean[]> {
    const now = Date.now();
    const args: (string | number | Buffer)[] = [this.dedupMs, now, now.toString(36), this.options];
    for (const { queue, eventId, hook, name, data } of requests) args.push(queue + 1, eventId, hook, name, data);
    return this.connection
      .geohookAcceptJobs(this.keys.length, ...this.keys, ...args)
      .then((answers) => answers.map((answer) => answer === 1));
  }
}
