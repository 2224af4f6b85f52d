-- BullMQ's own job writes, as its release pinned in job-script.ts lays them out: put in place of the include line of the
-- scripts that write jobs themselves (accept-jobs.lua, the fan-out's). The including script declares `rcall`
-- (redis.call) and `timestamp` (the time, ms) before it. A queue is a table `{ prefix = '<prefix>:<queue>:', opts =
-- <job options, unpacked>, events = prefix .. 'events', added = 0 }`; the includer raises each queue's job counter
-- (`INCRBY <prefix>id added`) once at its end.
-- The queue's meta as BullMQ reads it per job (the events stream's length), once per queue and call.
local function prepare(queue)
  if queue.maxEvents then return end
  local meta = queue.prefix .. 'meta'
  queue.maxEvents = rcall('HGET', meta, 'opts.maxLenEvents')
  if not queue.maxEvents then
    queue.maxEvents = 10000
    rcall('HSET', meta, 'opts.maxLenEvents', queue.maxEvents)
  end
end
-- A job's options as BullMQ stores them (`cjson` of the options with `jobId`): encoded once per options table and
-- call around a placeholder id (the keys, hence their order, are the same for every job), each job's id put in its
-- place.
local optionsText = {}
local function encodeOptions(opts, jobId)
  local parts = optionsText[opts]
  if not parts then
    opts['jobId'] = '\1'
    local text = cjson.encode(opts)
    local at = string.find(text, '"\\u0001"', 1, true)
    parts = { string.sub(text, 1, at - 1), string.sub(text, at + 8) }
    optionsText[opts] = parts
  end
  return parts[1] .. cjson.encode(jobId) .. parts[2]
end
-- BullMQ's addStandardJob for a job with an id of its own (and the queue's options, or opts); with a delay (ms,
-- the one opts hold), its addDelayedJob.
local function addJob(queue, jobId, name, data, opts, delay)
  local prefix = queue.prefix
  prepare(queue)
  local encoded = encodeOptions(opts or queue.opts, jobId)
  rcall('HMSET', prefix .. jobId, 'name', name, 'data', data, 'opts', encoded, 'timestamp', timestamp, 'delay', delay or 0, 'priority', 0)
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
      local attributes = rcall('HMGET', prefix .. 'meta', 'paused', 'concurrency')
      local held = attributes[1] and true or (attributes[2] and rcall('LLEN', prefix .. 'active') >= tonumber(attributes[2]))
      if not held then rcall('ZADD', prefix .. 'marker', 0, '0') end
      queue.marked = true
    end
    rcall('LPUSH', prefix .. 'wait', jobId)
    rcall('XADD', queue.events, 'MAXLEN', '~', queue.maxEvents, '*', 'event', 'waiting', 'jobId', jobId)
  end
  queue.added = queue.added + 1
end
-- BullMQ's removeJob for a job no worker took yet (delayed or waiting).
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
