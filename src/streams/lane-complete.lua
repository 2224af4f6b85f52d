-- The stream lane's completion (lane-jobs.ts): moves the jobs the lane published from a route queue's active list to
-- its completed set in one call, each as BullMQ's moveToFinished does for a completed job without parent,
-- deduplication or metrics: its lock checked against the lane's token and removed, `atm` raised, `returnvalue`
-- (null) and `finishedOn` set, a `completed` event on the events stream; a job whose kept count is 0 is deleted
-- instead. The events stream is trimmed once per call (BullMQ trims before each job), the completed set to the kept
-- count and age once per run of jobs that keep alike (BullMQ after each job: the same set in the end), and `drained`
-- is said once, when the queue is left empty.
--
-- KEYS: 1 wait, 2 active, 3 events, 4 meta, 5 completed, 6 stalled, 7 prioritized.
-- ARGV: 1 the queue's key prefix, 2 the time (ms), 3 the lock token, then per job: its id, the completed jobs kept
-- (a count, -1 for all) and their age kept (seconds, '' for any).
-- Returns per job 1 when completed, 0 when it was no longer the lane's (its lock lapsed and it went back).

local rcall = redis.call
local prefix, timestamp, token = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local completed = KEYS[5]

local function removeJobKeys(jobKey)
  rcall('DEL', jobKey, jobKey .. ':logs', jobKey .. ':dependencies', jobKey .. ':processed', jobKey .. ':failed',
    jobKey .. ':unsuccessful')
end
-- BullMQ's removeJobsByMaxAge (its limit of 1000 a call) and removeJobsByMaxCount.
local function trim(count, age)
  if age ~= '' then
    local start = timestamp - tonumber(age) * 1000
    local old = rcall('ZREVRANGEBYSCORE', completed, start, '-inf', 'LIMIT', 0, 1000)
    for _, jobId in ipairs(old) do removeJobKeys(prefix .. jobId) end
    if #old > 0 then
      if #old < 1000 then rcall('ZREMRANGEBYSCORE', completed, '-inf', start) else rcall('ZREM', completed, unpack(old)) end
    end
  end
  if count > 0 then
    for _, jobId in ipairs(rcall('ZREVRANGE', completed, count, -1)) do removeJobKeys(prefix .. jobId) end
    rcall('ZREMRANGEBYRANK', completed, 0, -(count + 1))
  end
end

local maxEvents = rcall('HGET', KEYS[4], 'opts.maxLenEvents')
if not maxEvents then
  maxEvents = 10000
  rcall('HSET', KEYS[4], 'opts.maxLenEvents', maxEvents)
end
rcall('XTRIM', KEYS[3], 'MAXLEN', '~', maxEvents)

local done = {}
local keptCount, keptAge
for a = 4, #ARGV, 3 do
  local jobId, count, age = ARGV[a], tonumber(ARGV[a + 1]), ARGV[a + 2]
  local jobKey = prefix .. jobId
  local ok = 0
  if rcall('GET', jobKey .. ':lock') == token then
    rcall('DEL', jobKey .. ':lock')
    rcall('SREM', KEYS[6], jobId)
    if rcall('LREM', KEYS[2], -1, jobId) == 1 then
      rcall('HINCRBY', jobKey, 'atm', 1)
      if count ~= 0 then
        if keptCount and (keptCount ~= count or keptAge ~= age) then trim(keptCount, keptAge) end
        keptCount, keptAge = count, age
        rcall('ZADD', completed, timestamp, jobId)
        rcall('HSET', jobKey, 'returnvalue', 'null', 'finishedOn', timestamp)
      else
        removeJobKeys(jobKey)
      end
      rcall('XADD', KEYS[3], '*', 'event', 'completed', 'jobId', jobId, 'returnvalue', 'null', 'prev', 'active')
      ok = 1
    end
  end
  done[#done + 1] = ok
end
if keptCount then trim(keptCount, keptAge) end
if rcall('LLEN', KEYS[1]) == 0 and rcall('LLEN', KEYS[2]) == 0 and rcall('ZCARD', KEYS[7]) == 0 then
  rcall('XADD', KEYS[3], '*', 'event', 'drained')
end
return done
