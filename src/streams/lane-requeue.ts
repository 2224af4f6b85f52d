import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis/connection.js';

/**
 * Puts a lane's taken jobs back in the order they were taken, when none is held by another holder: 1. BullMQ's
 * active list has the newest job on the left (workers `RPOPLPUSH` from the wait list's right end), so pushing them
 * onto the wait list's right end from the left leaves the oldest rightmost, taken first again. BullMQ's own stalled
 * check puts jobs back in a set's order, which would let a later event of a feature overtake an earlier one.
 * KEYS: 1 active, 2 wait, 3 marker. ARGV: 1 the queue's key prefix, 2 the token of the holder calling (its locks do
 * not count as held). Returns the jobs put back, or -1 when a job's lock is another holder's.
 */
const REQUEUE = `
local active = redis.call('LRANGE', KEYS[1], 0, -1)
for _, id in ipairs(active) do
  local lock = redis.call('GET', ARGV[1] .. id .. ':lock')
  if lock and lock ~= ARGV[2] then return -1 end
end
for _, id in ipairs(active) do
  redis.call('LREM', KEYS[1], 1, id)
  redis.call('DEL', ARGV[1] .. id .. ':lock')
  redis.call('RPUSH', KEYS[2], id)
end
if #active > 0 then redis.call('ZADD', KEYS[3], 0, '0') end
return #active`;

/**
 * Puts back the jobs a lane took and did not finish (its own, with `token`, or those whose holder died and whose
 * locks lapsed), in their order: the number put back, or -1 while another holder's lock is alive.
 */
export async function requeueTaken(connection: RedisClient, queue: Queue, token: string): Promise<number> {
  const keys = [queue.toKey('active'), queue.toKey('wait'), queue.toKey('marker')];
  return Number(await connection.eval(REQUEUE, keys.length, ...keys, queue.toKey(''), token));
}
