-- geohook's accept script: the acknowledgement's write, for a batch of accepted events (see job-writer.ts).
-- Loaded by accept-script.ts, which declares its constants as locals before this text: SCRIPT_QUEUES, HEADER,
-- PER_REQUEST, RESERVE, CONFIRM, MAX_AHEAD, MAX_ACTIVITY_FIELDS.
--
-- One call answers, per event, a repeat from the hook's dedup key, or from the watermarks when every range of
-- server generations the event covers was handed over already (docs/backfill.md), or else writes the BullMQ job
-- and tracks its ranges. The job id is the event id, unless a job already holds it (the same bytes on another
-- hook, or a job kept past the window): then `<event id>-<hook>-<time>`. A range is handed over already when it
-- ends at or below its watermark, or is exactly a range waiting for its server (a second webhook's delivery).
--
-- A range counts (moves its watermark) only once its server vouched for it: when it ends at or below the scope's
-- server generation, as the server itself last reported it at the range's service URL (`server-gens`,
-- `<generation>\t<service URL>` by scope). One that ends past it waits in `ahead` and a `confirm` job on the
-- backfill queue (id `confirm-<sha1 of scope>`, one at a time) reads the server's generation; the ranges it covers
-- then count in order, those it never covers are refused by the worker after a while. So no payload moves a
-- watermark past what the server has. A counted range that starts past its watermark leaves a gap: a job on the
-- backfill queue (id `gap-<sha1>` of scope and gap, once) for the generations in between.
--
-- The jobs are those BullMQ's `addStandardJob` writes for a job with an id of its own (the layout of the release
-- job-script.ts pins): the hash (`name`, `data`, `opts` as `cjson` encodes them, `timestamp`, `delay`,
-- `priority`), `added` and `waiting` on the events stream, the id on the wait list, the marker unless the queue is
-- paused or at its concurrency, and the job counter raised. What BullMQ looks up per job (the queue's meta) is
-- looked up once per queue and call, and the counter raised once by the call's count.
--
-- Each request may also name an activity (`<what>\t<service>`): its field of the activity hash is set to the
-- time, whatever the answer (a new field only while the hash has fewer than MAX_ACTIVITY_FIELDS).
--
-- KEYS: the watermarks, the activity, the server generations and the ranges ahead (hashes). The queues' keys are
-- made here from their key prefixes (as BullMQ's own scripts make a job's keys): on a Redis Cluster they share
-- the prefix's hash tag.
-- ARGV: 1 dedup window (ms), 2 the time (ms), 3 the same in base 36, 4 BullMQ's msgpacked job options, 5 those of
-- gap jobs, 6 those of confirm jobs, 7-10 the key prefixes (`<prefix>:<queue>:`) of the three event queues and
-- the backfill queue, then PER_REQUEST per request: queue (1-3, the order of those prefixes; or RESERVE or
-- CONFIRM), event id, hook, job name, job data (of CONFIRM: the time before which a range still ahead is refused,
-- ms; empty: none is), ranges (`scope\tfrom\tto\tserviceUrl\tsource` lines; empty for none), activity (empty
-- for none).
-- Returns one answer per request: 0 for a repeat, 1 for a new job (and for RESERVE), 2 for a range handed over
-- already; CONFIRM answers `<ranges still ahead>\n<refused from\tto lines>`.

local rcall = redis.call
local dedupMs, timestamp, time36 = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local watermarks, activity, serverGens, ahead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- Job options, unpacked at first use: the event queues share theirs, gap and confirm jobs have their own.
local options = {}
local function optionsOf(arg)
  options[arg] = options[arg] or cmsgpack.unpack(ARGV[arg])
  return options[arg]
end
-- Queue q (1-3 the event queues, SCRIPT_QUEUES the backfill queue), made at first use.
local queues = {}
local function queueOf(q)
  local queue = queues[q]
  if not queue then
    local prefix = ARGV[HEADER - SCRIPT_QUEUES + q]
    queue = { prefix = prefix, opts = optionsOf(q == SCRIPT_QUEUES and 5 or 4), events = prefix .. 'events', added = 0 }
    queues[q] = queue
  end
  return queue
end
-- BullMQ's addStandardJob for a job with an id of its own (and the queue's options, or opts).
local function addJob(queue, jobId, name, data, opts)
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
  local jobOpts = opts or queue.opts
  jobOpts['jobId'] = jobId
  rcall('HMSET', prefix .. jobId, 'name', name, 'data', data, 'opts', cjson.encode(jobOpts), 'timestamp', timestamp, 'delay', 0, 'priority', 0)
  rcall('XADD', queue.events, '*', 'event', 'added', 'jobId', jobId, 'name', name)
  rcall('LPUSH', prefix .. 'wait', jobId)
  rcall('XADD', queue.events, 'MAXLEN', '~', queue.maxEvents, '*', 'event', 'waiting', 'jobId', jobId)
  queue.added = queue.added + 1
end
local RANGE = '([^\t\n]+)\t(%d+)\t(%d+)\t([^\t\n]*)\t([^\n]*)'
local AHEAD = '(%d+)\t(%d+)\t([^\t\n]*)\t([^\t\n]*)\t(%d+)'
-- True when some range is neither below its watermark nor the very range of one waiting for its server.
local function fresh(ranges)
  if ranges == '' then return true end
  for scope, from, to in string.gmatch(ranges, RANGE) do
    local mark = rcall('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then
      local waiting = rcall('HGET', ahead, scope)
      if not waiting or not string.find('\n' .. waiting, '\n' .. from .. '\t' .. to .. '\t', 1, true) then return true end
    end
  end
  return false
end
-- A range the server vouched for moves its watermark; one starting past it leaves a gap for the backfill.
local function count(scope, from, to, url, source, hook)
  local mark = rcall('HGET', watermarks, scope)
  if mark and tonumber(to) <= tonumber(mark) then return end
  if mark and tonumber(from) > tonumber(mark) then
    local jobId = 'gap-' .. redis.sha1hex(scope .. '\t' .. mark .. '\t' .. from)
    local gaps = queueOf(SCRIPT_QUEUES)
    if rcall('EXISTS', gaps.prefix .. jobId) == 0 then
      local gap = { scope = scope, hook = hook, serviceUrl = url, from = mark, to = from }
      if source ~= '' then gap['source'] = source end
      addJob(gaps, jobId, 'gap', cjson.encode(gap))
    end
  end
  rcall('HSET', watermarks, scope, to)
end
-- A range past the server's generation waits for it, and a confirm job (one at a time) goes to read it.
local function pend(scope, from, to, url, source, hook)
  local lines = rcall('HGET', ahead, scope)
  local line = from .. '\t' .. to .. '\t' .. url .. '\t' .. source .. '\t' .. timestamp
  if not lines then
    rcall('HSET', ahead, scope, line)
  elseif select(2, string.gsub(lines, '\n', '')) + 1 < MAX_AHEAD then
    rcall('HSET', ahead, scope, lines .. '\n' .. line)
  end
  local confirms = queueOf(SCRIPT_QUEUES)
  local jobId = 'confirm-' .. redis.sha1hex(scope)
  if rcall('EXISTS', confirms.prefix .. jobId) == 0 then
    addJob(confirms, jobId, 'confirm', cjson.encode({ scope = scope, hook = hook, serviceUrl = url }), optionsOf(6))
  end
end
-- A scope's server generation as last read, and the URL of the service it was read at.
local function serverGenOf(scope)
  local value = rcall('HGET', serverGens, scope)
  if not value then return nil, nil end
  local gen, url = string.match(value, '^(%d+)\t(.*)$')
  return tonumber(gen), url
end
-- Records a scope's server generation, read at url, and counts, in order, the ranges waiting that it now covers
-- (those announced for that server). Those still ahead stay, but for ranges first seen before refuseBefore (when
-- given): refused. Returns what stays and what was refused.
local function confirm(scope, gen, url, hook, refuseBefore)
  local known, knownUrl = serverGenOf(scope)
  gen = tonumber(gen)
  if knownUrl == url and known > gen then
    gen = known
  elseif gen > 0 then
    rcall('HSET', serverGens, scope, gen .. '\t' .. url)
  end
  -- (A server without the service reads 0: it confirms nothing, and leaves no trace.)
  local lines = rcall('HGET', ahead, scope)
  if not lines then return 0, '' end
  local covered, left, refused = {}, {}, {}
  for from, to, at, source, seen in string.gmatch(lines, AHEAD) do
    if tonumber(to) <= gen and at == url then
      covered[#covered + 1] = { from, to, at, source }
    elseif refuseBefore and tonumber(seen) < refuseBefore then
      refused[#refused + 1] = from .. '\t' .. to
    else
      left[#left + 1] = table.concat({ from, to, at, source, seen }, '\t')
    end
  end
  table.sort(covered, function(x, y) return tonumber(x[1]) < tonumber(y[1]) end)
  for _, range in ipairs(covered) do count(scope, range[1], range[2], range[3], range[4], hook) end
  if #left == 0 then rcall('HDEL', ahead, scope) else rcall('HSET', ahead, scope, table.concat(left, '\n')) end
  return #left, table.concat(refused, '\n')
end
-- A delivery's ranges: those the generation of their server covers count now, the others wait for it.
local function track(ranges, hook)
  for scope, from, to, url, source in string.gmatch(ranges, RANGE) do
    local mark = rcall('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then
      local gen, at = serverGenOf(scope)
      if gen and at == url and tonumber(to) <= gen then count(scope, from, to, url, source, hook) else pend(scope, from, to, url, source, hook) end
    end
  end
end
-- An activity of a service, recorded with the time.
local function record(field)
  if field ~= '' and (rcall('HEXISTS', activity, field) == 1 or rcall('HLEN', activity) < MAX_ACTIVITY_FIELDS) then
    rcall('HSET', activity, field, timestamp)
  end
end
-- Ranges the server reported itself: they raise its generations and count.
local function reserve(ranges, hook)
  for scope, from, to, url, source in string.gmatch(ranges, RANGE) do
    confirm(scope, to, url, hook, nil)
    count(scope, from, to, url, source, hook)
  end
  return 1
end
-- Server generations read to confirm the ranges waiting ahead of them: `<ranges still ahead>\n<refused ranges>`.
local function confirmAll(ranges, hook, refuseBefore)
  local left, refused = 0, {}
  for scope, _, to, url in string.gmatch(ranges, RANGE) do
    local stays, gone = confirm(scope, to, url, hook, refuseBefore)
    left = left + stays
    if gone ~= '' then refused[#refused + 1] = gone end
  end
  return left .. '\n' .. table.concat(refused, '\n')
end
-- The job id of a new event, or nil for a repeat within the window (the hook's dedup key is there). One look for
-- the dedup key and a job holding the event id; the dedup key alone when one is there.
local function newJobId(queue, dedupKey, eventId, hook)
  local found = rcall('EXISTS', dedupKey, queue.prefix .. eventId)
  if found == 2 or (found == 1 and rcall('EXISTS', dedupKey) == 1) then return nil end
  return found == 0 and eventId or (eventId .. '-' .. hook .. '-' .. time36)
end
-- An event: 0 a repeat, 2 its ranges handed over already, 1 a new job (its ranges tracked).
local function accept(queue, eventId, hook, name, data, ranges)
  local dedupKey = queue.prefix .. 'de:' .. hook .. ':' .. eventId
  local jobId = newJobId(queue, dedupKey, eventId, hook)
  if not jobId then return 0 end
  if not fresh(ranges) then return 2 end
  addJob(queue, jobId, name, data)
  -- Only a complete job marks the event seen: when Redis fails the script midway, the retry writes it. The key's
  -- presence is the mark; 1 is Redis's smallest value (a shared integer) for the 24 h it is kept.
  rcall('SET', dedupKey, 1, 'PX', dedupMs)
  track(ranges, hook)
  return 1
end

local answers = {}
for i = 0, (#ARGV - HEADER) / PER_REQUEST - 1 do
  local a = HEADER + i * PER_REQUEST
  local q, hook, ranges = tonumber(ARGV[a + 1]), ARGV[a + 3], ARGV[a + 6]
  record(ARGV[a + 7])
  if q == RESERVE then
    answers[i + 1] = reserve(ranges, hook)
  elseif q == CONFIRM then
    answers[i + 1] = confirmAll(ranges, hook, ARGV[a + 5] ~= '' and tonumber(ARGV[a + 5]) or nil)
  else
    answers[i + 1] = accept(queueOf(q), ARGV[a + 2], hook, ARGV[a + 4], ARGV[a + 5], ranges)
  end
end
for _, queue in pairs(queues) do
  if queue.added > 0 then rcall('INCRBY', queue.prefix .. 'id', queue.added) end
end
return answers
