-- The fan-out script (fanout-script.ts): hands a run of the event log to the destinations that take its events, and
-- moves the fan-out's cursor past it, in one call. The cursor is compared first, so two receivers handing the same
-- run on cannot both do it: each event reaches each destination once, in the order of the log. The version of the
-- subscriptions is compared too: a run matched against definitions that changed meanwhile is matched again.
-- Loaded by fanout-script.ts, which puts BullMQ's job writes at its include line.
--
-- A destination whose queue already holds a job of an event's id (kept after it was done, or still waiting) gets
-- none; the ids of a destination's new jobs go onto its wait list in one push. A destination with a backlog cap then
-- drops its oldest waiting jobs past the cap (a count, an age), and counts them.
--
-- KEYS: 1 the fan-out's state (a hash: `cursor`, `version`, `catchup:<name>`), 2 the dropped counts (a hash).
-- ARGV: 1 the state field this call moves (`cursor`, or `catchup:<name>` for a subscription reading the log from
-- an earlier time), 2 its value expected ('' for none), 3 its new value, 4 the version expected, 5 the time (ms),
-- 6 for a catch-up, the cursor at which it joins the others ('': none): when the fan-out's cursor is that, the
-- field is deleted (the subscription is then handed events with everyone) and the version raised, 7 the number of
-- events E, then E times (job id, job name, job data), then per destination: its queue's key prefix, its msgpacked
-- job options, its backlog cap in jobs (0: none), in ms of age (0: none), its name in the dropped counts, and the
-- indexes (from 1, space-separated) of the events it takes.
-- Returns 1 when done, 0 when the field was not as expected (another receiver moved it), -1 when the version was
-- not (the subscriptions changed).

local rcall = redis.call
local timestamp = tonumber(ARGV[5])
-- @include bullmq-jobs.lua

local state, dropped = KEYS[1], KEYS[2]
if (rcall('HGET', state, ARGV[1]) or '') ~= ARGV[2] then return 0 end
if (rcall('HGET', state, 'version') or '0') ~= ARGV[4] then return -1 end

-- BullMQ's removal of the oldest waiting job of a queue (its wait list's tail: workers take from there).
local function dropOldest(queue)
  local jobId = rcall('RPOP', queue.prefix .. 'wait')
  if not jobId then return false end
  prepare(queue)
  rcall('DEL', queue.prefix .. jobId, queue.prefix .. jobId .. ':logs')
  rcall('XADD', queue.events, 'MAXLEN', '~', queue.maxEvents, '*', 'event', 'removed', 'jobId', jobId, 'prev', 'wait')
  return true
end
-- Drops what is past the caps: the oldest jobs over `count` waiting (`length`, when known), then those that waited
-- over `ageMs`.
local function cap(queue, length, count, ageMs)
  local n = 0
  if count > 0 then
    for _ = 1, (length or rcall('LLEN', queue.prefix .. 'wait')) - count do
      if dropOldest(queue) then n = n + 1 end
    end
  end
  if ageMs > 0 then
    while true do
      local oldest = rcall('LINDEX', queue.prefix .. 'wait', -1)
      local added = oldest and tonumber(rcall('HGET', queue.prefix .. oldest, 'timestamp'))
      if not (added and added < timestamp - ageMs) or not dropOldest(queue) then break end
      n = n + 1
    end
  end
  return n
end
-- Job options by their msgpacked text: destinations of the same options share one table, hence one encoding.
local unpacked = {}
local function optionsOf(text)
  unpacked[text] = unpacked[text] or cmsgpack.unpack(text)
  return unpacked[text]
end
-- Whether any of `keys` exists: one look per 1000 keys (Lua's stack bounds unpack).
local function anyExists(keys)
  for first = 1, #keys, 1000 do
    if rcall('EXISTS', unpack(keys, first, math.min(first + 999, #keys))) > 0 then return true end
  end
  return false
end

local events = tonumber(ARGV[7])
local a = 8 + 3 * events
while a <= #ARGV do
  local prefix = ARGV[a]
  local queue = jobQueue(prefix, optionsOf(ARGV[a + 1]), true)
  -- The taken entries' first arguments, and their job keys: one look for them all, and when none is there (the
  -- usual case) none per job. An id taken twice in the call gets one job too.
  local taken, keys, added = {}, {}, {}
  for index in string.gmatch(ARGV[a + 5], '%d+') do
    local e = 8 + (tonumber(index) - 1) * 3
    taken[#taken + 1] = e
    keys[#keys + 1] = prefix .. ARGV[e]
  end
  local look = anyExists(keys)
  for i, e in ipairs(taken) do
    local jobId = ARGV[e]
    if not added[jobId] and not (look and rcall('EXISTS', keys[i]) == 1) then
      added[jobId] = true
      addJob(queue, jobId, ARGV[e + 1], ARGV[e + 2])
    end
  end
  local n = cap(queue, finish(queue), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]))
  if n > 0 then rcall('HINCRBY', dropped, ARGV[a + 4], n) end
  a = a + 6
end

if ARGV[6] ~= '' and rcall('HGET', state, 'cursor') == ARGV[6] then
  rcall('HDEL', state, ARGV[1])
  rcall('HINCRBY', state, 'version', 1)
else
  rcall('HSET', state, ARGV[1], ARGV[3])
end
return 1
