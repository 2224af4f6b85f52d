-- The stream lane's take (lane-jobs.ts): moves up to ARGV[5] jobs from a route queue's wait list to its active list
-- in one call, each as BullMQ's moveToActive does for a job without priority, delay or rate limit (the jobs the
-- fan-out writes): taken from the wait list's right end, locked with the lane's token, `processedOn` set, `ats`
-- raised, an `active` event on the queue's events stream. The marker is left only while jobs still wait. A paused
-- queue gives none.
--
-- KEYS: 1 wait, 2 active, 3 events, 4 meta, 5 marker.
-- ARGV: 1 the queue's key prefix, 2 the time (ms), 3 the lock token, 4 the lock's duration (ms), 5 the most jobs.
-- Returns, per job taken and in the order taken, its id then its hash (HGETALL).

local rcall = redis.call
if rcall('HEXISTS', KEYS[4], 'paused') == 1 then return {} end
local taken = {}
for _ = 1, tonumber(ARGV[5]) do
  local jobId = rcall('RPOPLPUSH', KEYS[1], KEYS[2])
  if not jobId then break end
  local jobKey = ARGV[1] .. jobId
  rcall('SET', jobKey .. ':lock', ARGV[3], 'PX', ARGV[4])
  rcall('XADD', KEYS[3], '*', 'event', 'active', 'jobId', jobId, 'prev', 'waiting')
  rcall('HSET', jobKey, 'processedOn', ARGV[2])
  rcall('HINCRBY', jobKey, 'ats', 1)
  taken[#taken + 1] = jobId
  taken[#taken + 1] = rcall('HGETALL', jobKey)
end
if #taken > 0 and rcall('LLEN', KEYS[1]) > 0 then rcall('ZADD', KEYS[5], 0, '0') end
return taken
