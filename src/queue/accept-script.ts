import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/connection.js';

/**
 * The acknowledgement's write, for a batch of events at once: one script call, so one round trip, one
 * socket write and one atomic step for every event accepted in the same turn of the event loop. For each
 * event it answers a repeat from the hook's dedup key, picks the job id (the event id, unless that id is
 * already a job or claimed by the same bytes on another hook) and appends the envelope to the inbox
 * stream, from which an {@link InboxMover} makes the BullMQ job.
 *
 * KEYS, four per event: dedup key of the hook, job key of the event id, claim of the event id, inbox.
 * ARGV: 1 dedup window (ms), 2 claim lifetime (ms), then five per event: event id, job id to use when the
 * event id is taken, queue name, job name, envelope (JSON).
 * Returns one number per event: 0 for a repeat, 1 for a new event.
 */
const acceptLua = `
local answers = {}
for i = 0, #KEYS / 4 - 1 do
  local k, a = i * 4, 2 + i * 5
  if redis.call('EXISTS', KEYS[k + 1]) == 1 then
    answers[i + 1] = 0
  else
    local jobId = ARGV[a + 1]
    if redis.call('EXISTS', KEYS[k + 2]) == 1 or not redis.call('SET', KEYS[k + 3], '1', 'NX', 'PX', ARGV[2]) then
      jobId = ARGV[a + 2]
    end
    redis.call('SET', KEYS[k + 1], jobId, 'PX', ARGV[1])
    redis.call('XADD', KEYS[k + 4], '*', 'queue', ARGV[a + 3], 'name', ARGV[a + 4], 'id', jobId, 'data', ARGV[a + 5])
    answers[i + 1] = 1
  end
end
return answers
`;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `numberOfKeys` first: the keys vary with the batch. */
    geohookAccept(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Result<number[], Context>;
  }
}

/** Where an event is written. */
export interface AcceptKeys {
  dedup: string;
  job: string;
  claim: string;
  inbox: string;
}

/** What is stored for an event: the inbox entry's fields. */
export interface AcceptedEntry {
  queue: string;
  /** Job name: the event type. */
  name: string;
  eventId: string;
  /** Job id used when the event id is taken. */
  fallbackJobId: string;
  /** The envelope as JSON. */
  data: string;
}

/** One event of a batch. */
export interface AcceptRequest {
  keys: AcceptKeys;
  entry: AcceptedEntry;
}

/** Makes `connection.geohookAccept` (EVALSHA, loaded on first use); idempotent. */
export function defineAcceptCommand(connection: RedisClient): void {
  if (typeof connection.geohookAccept !== 'function') connection.defineCommand('geohookAccept', { lua: acceptLua });
}

/** Runs the script for `requests`: one answer per request, true for a new event, false for a repeat. */
export async function acceptEvents(
  connection: RedisClient,
  requests: readonly AcceptRequest[],
  windows: { dedupMs: number; claimMs: number },
): Promise<boolean[]> {
  const keys: string[] = [];
  const args: (string | number)[] = [windows.dedupMs, windows.claimMs];
  for (const { keys: k, entry: e } of requests) {
    keys.push(k.dedup, k.job, k.claim, k.inbox);
    args.push(e.eventId, e.fallbackJobId, e.queue, e.name, e.data);
  }
  const answers = await connection.geohookAccept(keys.length, ...keys, ...args);
  return answers.map((answer) => answer === 1);
}
