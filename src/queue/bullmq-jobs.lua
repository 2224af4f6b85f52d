-- BullMQ's own job writes, as its release pinned in job-script.ts lays them out: put in place of the include line of the
-- scripts that write jobs themselves (accept-jobs.lua, the fan-out's). The including script declares `rcall`
-- (redis.call) and `timestamp` (the time, ms) before it, makes each queue it writes to with `jobQueue`, and calls
-- `finish` on each once at its end: what BullMQ does per job and can be done once per queue and call is done there
-- (the events stream trimmed, the job counter raised by the count; for a batched queue, the ids pushed onto the wait
-- list in one LPUSH). The script is atomic: no reader sees a job before its call ends, so the state it leaves is
-- BullMQ's.

-- A queue: its key prefix (`<prefix>:<queue>:`) and its job options (unpacked). A `batched` queue's waiting jobs go
-- onto its wait list together, in `finish`; otherwise each as it is written, so that a call Redis fails midway (a
-- command's error does not undo those before it) leaves each job it wrote whole.
local function jobQueue(prefix, opts, batched)
  return { prefix = prefix, opts = opts, events = prefix .. 'events', added = 0, waiting = batched and {} or nil }
end
-- The queue's meta as BullMQ reads it per job (the events stream's length; paused, or at its concurrency), once per
-- queue and call.
local function prepare(queue)
  if queue.maxEvents then return end
  local meta = queue.prefix .. 'meta'
  local attributes = rcall('HMGET', meta, 'opts.maxLenEvents', 'paused', 'concurrency')
  queue.maxEvents = attributes[1]
  if not queue.maxEvents then
    queue.maxEvents = 10000
    rcall('HSET', meta, 'opts.maxLenEvents', queue.maxEvents)
  end
  queue.held = attributes[2] and true or (attributes[3] and rcall('LLEN', queue.prefix .. 'active') >= tonumber(attributes[3]))
end
-- A job's options as BullMQ stores them (`cjson` of the options with `jobId`): encoded once per options table and
-- call around a placeholder id (the keys, hence their order, are the same for every job), each job's id put in its
-- place, once per id (queues of the same options table share it).
local optionsText = {}
local function encodeOptions(opts, jobId)
  local parts = optionsText[opts]
  if not parts then
    opts['jobId'] = '\1'
    local text = cjson.encode(opts)
    local at = string.find(text, '"\\u0001"', 1, true)
    parts = { string.sub(text, 1, at - 1), string.sub(text, at + 8), byId = {} }
    optionsText[opts] = parts
  end
  local encoded = parts.byId[jobId]
  if not encoded then
    encoded = parts[1] .. cjson.encode(jobId) .. parts[2]
    parts.byId[jobId] = encoded
  end
  return encoded
end
-- The hash's numbers as text: Redis would print each Lua number it is handed (`%.17g`), per job.
local timestampText = tostring(timestamp)
-- A batched queue's ids added since its last push, pushed in one LPUSH (per 1000: Lua's stack bounds unpack), which
-- leaves the list as one LPUSH per id would. Returns the list's length, or nil when there was none.
local function pushWaiting(queue)
  local ids, length = queue.waiting, nil
  if not ids then return nil end
  for first = 1, #ids, 1000 do
    length = rcall('LPUSH', queue.prefix .. 'wait', unpack(ids, first, math.min(first + 999, #ids)))
  end
  queue.waiting = {}
  return length
end
-- BullMQ's addStandardJob for a job with an id of its own (and the queue's options, or opts); with a delay (ms,
-- the one opts hold), its addDelayedJob. A batched queue's waiting job reaches its wait list in `finish`.
local function addJob(queue, jobId, name, data, opts, delay)
  local prefix = queue.prefix
  prepare(queue)
  local encoded = encodeOptions(opts or queue.opts, jobId)
  rcall('HMSET', prefix .. jobId, 'name', name, 'data', data, 'opts', encoded, 'timestamp', timestampText, 'delay', delay and tostring(delay) or '0', 'priority', '0')
  rcall('XADD', queue.events, '*', 'event', 'added', 'jobId', jobId, 'name', name)
  if delay then
    -- The score bakes in an order among the jobs due in the same millisecond; the marker says when the next is due.
    local delayed, at = prefix .. 'delayed', timestamp + delay
    local score, last = at * 0x1000, (at + 1) * 0x1000 - 1
    local top = rcall('ZREVRANGEBYSCORE', delayed, last, score, 'WITHSCORES', 'LIMIT', 0, 1)
    if top[2] then score = math.min(tonumber(top[2]) + 1, last) end
    rcall('ZADD', delayed, score, jobId)
    rcall('XADD', queue.events, 'MAXLEN', '~', queue.maxEvents, '*', 'event', 'delayed', 'jobId', jobId, 'delay', at)
    local next = rcall('ZRANGE', delayed, 0, 0, 'WITHSCORES')
    rcall('ZADD', prefix .. 'marker', tonumber(next[2]) / 0x1000, '1')
  else
    if not queue.marked then
      if not queue.held then rcall('ZADD', prefix .. 'marker', 0, '0') end
      queue.marked = true
    end
    if queue.waiting then
      queue.waiting[#queue.waiting + 1] = jobId
    else
      rcall('LPUSH', prefix .. 'wait', jobId)
    end
    rcall('XADD', queue.events, '*', 'event', 'waiting', 'jobId', jobId)
  end
  queue.added = queue.added + 1
end
-- BullMQ's removeJob for a job no worker took yet (delayed or waiting) of a queue that is not batched.
local function removeJob(queue, jobId)
  local prefix = queue.prefix
  prepare(queue)
  local prev = 'delayed'
  if rcall('ZREM', prefix .. 'delayed', jobId) == 0 then
    rcall('LREM', prefix .. 'wait', 1, jobId)
    prev = 'wait'
  end
  rcall('DEL', prefix .. jobId, prefix .. jobId .. ':logs')
  rcall('XADD', queue.events, 'MAXLEN', '~', queue.maxEvents, '*', 'event', 'removed', 'jobId', jobId, 'prev', prev)
end
-- The end of a call's writes to a queue: a batched queue's waiting ids pushed, the events stream trimmed to its
-- length (as each `waiting` event of BullMQ's does), the job counter raised by the jobs added. Returns the wait list's
-- length when ids were pushed, else nil.
local function finish(queue)
  local length = pushWaiting(queue)
  if queue.added > 0 then
    rcall('XTRIM', queue.events, 'MAXLEN', '~', queue.maxEvents)
    rcall('INCRBY', queue.prefix .. 'id', queue.added)
    queue.added = 0
  end
  return length
end
