-- geohook's accept script: the acknowledgement's write, for a batch of accepted events (see job-writer.ts).
-- Loaded by accept-script.ts, which declares its constants as locals before this text: SCRIPT_QUEUES, HEADER,
-- PER_REQUEST, RESERVE, CONFIRM, MAX_AHEAD, MAX_WAITING_SCOPES, MAX_GAPS, MAX_ACTIVITY_FIELDS, MAX_ORIGINS.
--
-- One call answers, per event, a repeat from its dedup key, or from the watermarks when every range of server
-- generations the event covers was handed over already (docs/backfill.md), or else writes the BullMQ job and
-- tracks its ranges. The job id is the event id, unless a job already holds it (the same bytes on another hook, or
-- a job kept past the window): then `<event id>-<hook>-<time>`. A range is handed over already when it ends at or
-- below its watermark (unless it lies in a gap no worker took yet: then it fills it), or is exactly a range
-- waiting for its server (a second webhook's delivery).
--
-- The dedup key (`<prefix>:de:` and 16 bytes of the SHA-256 of hook and event id) is written only for an event a
-- repeat of which its ranges would not show: one without ranges, or with a range that could not wait for its
-- server (the list full). A range waiting for its server carries the digest: when it is refused, the key is
-- written then, for the rest of the window. The key of the earlier layout (`<queue prefix>de:<hook>:<event id>`)
-- is still read, so that keys written before an upgrade keep answering for their window.
--
-- A range counts (moves its watermark) only once its server vouched for it: when it ends at or below the scope's
-- server generation, as the server itself last reported it at the range's service URL (`server-gens`,
-- `<generation>\t<service URL>` by scope). One that ends past it waits in `ahead` and a `confirm` job on the
-- backfill queue (id `confirm-<sha1 of scope>`, one at a time) reads the server's generation; the ranges it covers
-- then count in order, those it never covers are refused by the worker after a while. So no payload moves a
-- watermark past what the server has. A counted range that starts past its watermark leaves a gap: a job on the
-- backfill queue (id `gap-<sha1>` of scope and gap, once) for the generations in between, delayed by the gap delay
-- when a delivery revealed it, and listed in `gaps` (by scope, `from\tto` lines, at most MAX_GAPS). A counted range
-- that overlaps a gap no worker took yet (no `processedOn`) takes its generations out of it: the gap's job is
-- removed and a job is written for each part still uncovered, so no generation reaches consumers twice.
--
-- The jobs are those BullMQ's `addStandardJob` writes for a job with an id of its own (the layout of the release
-- job-script.ts pins): the hash (`name`, `data`, `opts` as `cjson` encodes them, `timestamp`, `delay`,
-- `priority`), `added` and `waiting` on the events stream, the id on the wait list, the marker unless the queue is
-- paused or at its concurrency, and the job counter raised. What BullMQ looks up per job (the queue's meta) is
-- looked up once per queue and call, the events stream trimmed once and the counter raised once by the call's count
-- (bullmq-jobs.lua).
--
-- Whenever a watermark moves, how its new generations reached geohook is recorded for change events (KEYS 7, by
-- scope, `to\torigin` lines in order, each line the generations above the one before up to `to`, neighbours of one
-- origin merged): `webhook` for a delivered range, `backfill` for a gap (`poll` when a poll found it), and `webhook`
-- again for the part of a gap a late delivery fills. Change events claim their ranges one origin at a time and drop
-- the lines they pass (range-claims.ts); at most MAX_ORIGINS lines are kept (a scope no one resolves), the oldest
-- dropped first.
--
-- Each request may also name an activity (`<what>\t<service>`): its field of the activity hash is set to the
-- time, whatever the answer (a new field only while the hash has fewer than MAX_ACTIVITY_FIELDS).
--
-- Each new event is also appended to the event log (KEYS 6, a stream: `j` its job id, `d` its data), in the same
-- call: the fan-out reads it from there into every relay route and subscription that takes it, so that no
-- acknowledged event escapes them (docs/subscriptions.md).
--
-- KEYS: the watermarks, the activity, the server generations, the ranges ahead and the gaps (hashes), the event log (a
-- stream), the watermarks' origins (a hash). The queues' keys are
-- made here from their key prefixes (as BullMQ's own scripts make a job's keys): on a Redis Cluster they share
-- the prefix's hash tag.
-- ARGV: 1 dedup window (ms), 2 the time (ms), 3 the same in base 36, 4 BullMQ's msgpacked job options, 5 those of
-- gap jobs, 6 those of confirm jobs, 7 those of delayed gap jobs, 8 the gap delay (ms; 0: none), 9 the dedup keys'
-- prefix, 10-13 the key prefixes
-- (`<prefix>:<queue>:`) of the three event queues and the backfill queue, then PER_REQUEST per request: queue (1-3,
-- the order of those prefixes; or RESERVE or CONFIRM), event id, hook, job name, job data (of CONFIRM: the time
-- before which a range still ahead is refused, ms; empty: none is), ranges (`scope\tfrom\tto\tserviceUrl\tsource`
-- lines; empty for none), activity (empty for none), the dedup digest (16 bytes; empty for RESERVE and CONFIRM).
-- Returns one answer per request: 0 for a repeat, 1 for a new job (and for RESERVE), 2 for a range handed over
-- already; CONFIRM answers `<ranges still ahead>\n<refused from\tto lines>`.

local rcall = redis.call
local dedupMs, timestamp, time36 = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local gapDelay, dedupPrefix = tonumber(ARGV[8]), ARGV[9]
local watermarks, activity, serverGens, ahead, gaps, origins = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[7]
-- BullMQ's job writes (jobQueue, addJob, removeJob, finish), shared with the fan-out script.
-- @include bullmq-jobs.lua
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
    queue = jobQueue(prefix, optionsOf(q == SCRIPT_QUEUES and 5 or 4))
    queues[q] = queue
  end
  return queue
end
local RANGE = '([^\t\n]+)\t(%d+)\t(%d+)\t([^\t\n]*)\t([^\n]*)'
local AHEAD = '^(%d+)\t(%d+)\t([^\t]*)\t([^\t]*)\t(%d+)\t?(%x*)$'
local GAP = '(%d+)\t(%d+)'
local function hex(bytes)
  return (string.gsub(bytes, '.', function(c) return string.format('%02x', string.byte(c)) end))
end
local function unhex(text)
  return (string.gsub(text, '%x%x', function(cc) return string.char(tonumber(cc, 16)) end))
end
-- A scope's server generation as last read, and the URL of the service it was read at.
local function serverGenOf(scope)
  local value = rcall('HGET', serverGens, scope)
  if not value then return nil, nil end
  local gen, url = string.match(value, '^(%d+)\t(.*)$')
  return tonumber(gen), url
end
local function gapId(scope, from, to)
  return 'gap-' .. redis.sha1hex(scope .. '\t' .. from .. '\t' .. to)
end
-- True while no worker took the gap job: it may still change.
local function untaken(queue, jobId)
  local key = queue.prefix .. jobId
  return rcall('EXISTS', key) == 1 and rcall('HEXISTS', key, 'processedOn') == 0
end
-- True when (from, to] lies in a gap of scope that no worker took yet, and the server vouched for the range (it
-- would count: at or below the generation the server reported at its URL).
local function fills(scope, from, to, url)
  local lines = rcall('HGET', gaps, scope)
  from, to = tonumber(from), tonumber(to)
  if not lines or from >= to then return false end
  for gapFrom, gapTo in string.gmatch(lines, GAP) do
    if tonumber(gapFrom) <= from and to <= tonumber(gapTo) then
      local gen, at = serverGenOf(scope)
      return gen ~= nil and at == url and to <= gen and untaken(queueOf(SCRIPT_QUEUES), gapId(scope, gapFrom, gapTo))
    end
  end
  return false
end
-- A gap's job (gap: its data, from and to replaced), delayed by the gap delay when delayed, listed in the gaps of
-- its scope (lines: those listed).
local function addGap(gap, from, to, delayed, lines)
  local queue, jobId = queueOf(SCRIPT_QUEUES), gapId(gap.scope, from, to)
  if rcall('EXISTS', queue.prefix .. jobId) == 1 then return end
  gap.from, gap.to = from, to
  if delayed and gapDelay > 0 then
    addJob(queue, jobId, 'gap', cjson.encode(gap), optionsOf(7), gapDelay)
  else
    addJob(queue, jobId, 'gap', cjson.encode(gap))
  end
  if #lines >= MAX_GAPS then
    -- Full: those a worker took are dropped; when none was, the new one is not listed (nothing fills it).
    local left = {}
    for _, line in ipairs(lines) do
      if untaken(queue, gapId(gap.scope, string.match(line, GAP))) then left[#left + 1] = line end
    end
    for i = #lines, 1, -1 do lines[i] = left[i] end
    if #lines >= MAX_GAPS then return end
  end
  lines[#lines + 1] = from .. '\t' .. to
end
local function gapLines(scope)
  local lines = {}
  for line in string.gmatch(rcall('HGET', gaps, scope) or '', '[^\n]+') do lines[#lines + 1] = line end
  return lines
end
local function saveGapLines(scope, lines)
  if #lines == 0 then rcall('HDEL', gaps, scope) else rcall('HSET', gaps, scope, table.concat(lines, '\n')) end
end
-- Records that a scope's generations in (from, to] reached geohook by `origin`: the lines around keep theirs.
local function noteOrigin(scope, from, to, origin)
  local low, high = tonumber(from), tonumber(to)
  local lines, placed = {}, false
  local function push(at, how)
    local last = lines[#lines]
    if last and last[2] == how then last[1] = at else lines[#lines + 1] = { at, how } end
  end
  for at, how in string.gmatch(rcall('HGET', origins, scope) or '', '(%d+)\t(%a+)') do
    local n = tonumber(at)
    if n > low and not placed then
      -- The line reaching past `from`: its generations up to `from` keep their origin.
      if #lines == 0 or tonumber(lines[#lines][1]) < low then push(from, how) end
      push(to, origin)
      placed = true
    end
    if n <= low or n > high then push(at, how) end
  end
  if not placed then push(to, origin) end
  local text = {}
  for i = math.max(1, #lines - MAX_ORIGINS + 1), #lines do text[#text + 1] = lines[i][1] .. '\t' .. lines[i][2] end
  rcall('HSET', origins, scope, table.concat(text, '\n'))
end
-- Takes (from, to], handed to consumers, out of the gaps of scope no worker took yet: each it overlaps is replaced
-- by a job per part it leaves uncovered (delayed again when it was), and the part it covers reached geohook by
-- `origin`. A gap a worker took is left as it is.
local function cover(scope, from, to, origin)
  local listed = rcall('HGET', gaps, scope)
  if not listed then return end
  local queue, low, high = queueOf(SCRIPT_QUEUES), tonumber(from), tonumber(to)
  local lines, changed = {}, false
  for gapFrom, gapTo in string.gmatch(listed, GAP) do
    local jobId = gapId(scope, gapFrom, gapTo)
    if tonumber(gapFrom) < high and low < tonumber(gapTo) and untaken(queue, jobId) then
      changed = true
      local job = rcall('HMGET', queue.prefix .. jobId, 'data', 'delay')
      local gap, delay = cjson.decode(job[1]), tonumber(job[2]) > 0
      removeJob(queue, jobId)
      noteOrigin(scope, tonumber(gapFrom) > low and gapFrom or from, tonumber(gapTo) < high and gapTo or to, origin)
      if tonumber(gapFrom) < low then addGap(gap, gapFrom, from, delay, lines) end
      if high < tonumber(gapTo) then addGap(gap, to, gapTo, delay, lines) end
    else
      lines[#lines + 1] = gapFrom .. '\t' .. gapTo
    end
  end
  if changed then saveGapLines(scope, lines) end
end
-- True when some range is new: neither below its watermark (but for one filling a gap) nor the very range of one
-- waiting for its server.
local function fresh(ranges)
  if ranges == '' then return true end
  for scope, from, to, url in string.gmatch(ranges, RANGE) do
    local mark = rcall('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then
      local waiting = rcall('HGET', ahead, scope)
      if not waiting or not string.find('\n' .. waiting, '\n' .. from .. '\t' .. to .. '\t', 1, true) then return true end
    elseif fills(scope, from, to, url) then
      return true
    end
  end
  return false
end
-- A range the server vouched for moves its watermark; one starting past it leaves a gap for the backfill (delayed
-- when a delivery revealed it), one starting below it takes its generations out of the gaps no worker took yet.
-- `origin` is how the range itself reached geohook; its gap is found by the backfill (or the poll, by `source`).
local function count(scope, from, to, url, source, hook, delayed, origin)
  local mark = rcall('HGET', watermarks, scope)
  if mark and tonumber(to) <= tonumber(mark) then return end
  local start = from
  if mark and tonumber(from) > tonumber(mark) then
    local gap = { scope = scope, hook = hook, serviceUrl = url }
    if source ~= '' then gap['source'] = source end
    local lines = gapLines(scope)
    addGap(gap, mark, from, delayed, lines)
    saveGapLines(scope, lines)
    noteOrigin(scope, mark, from, source == 'poll' and 'poll' or 'backfill')
  elseif mark and tonumber(from) < tonumber(mark) then
    cover(scope, from, mark, origin)
    start = mark
  end
  if tonumber(to) > tonumber(start) then noteOrigin(scope, start, to, origin) end
  rcall('HSET', watermarks, scope, to)
end
-- A range past the server's generation waits for it (with the digest of its event's dedup key), and a confirm job
-- (one at a time) goes to read it. False when the list of the scope is full, or when the scope is new, its server
-- never read, and MAX_WAITING_SCOPES scopes wait already: the range is not kept, and nothing is read for it.
local function pend(scope, from, to, url, source, hook, digest)
  local lines = rcall('HGET', ahead, scope)
  if not lines and rcall('HLEN', ahead) >= MAX_WAITING_SCOPES and rcall('HEXISTS', serverGens, scope) == 0 then
    return false
  end
  local line = from .. '\t' .. to .. '\t' .. url .. '\t' .. source .. '\t' .. timestamp .. '\t' .. hex(digest)
  local kept = true
  if not lines then
    rcall('HSET', ahead, scope, line)
  elseif select(2, string.gsub(lines, '\n', '')) + 1 < MAX_AHEAD then
    rcall('HSET', ahead, scope, lines .. '\n' .. line)
  else
    kept = false
  end
  local confirms = queueOf(SCRIPT_QUEUES)
  local jobId = 'confirm-' .. redis.sha1hex(scope)
  if rcall('EXISTS', confirms.prefix .. jobId) == 0 then
    addJob(confirms, jobId, 'confirm', cjson.encode({ scope = scope, hook = hook, serviceUrl = url }), optionsOf(6))
  end
  return kept
end
-- Records a scope's server generation, read at url, and counts, in order, the ranges waiting that it now covers
-- (those announced for that server). Those still ahead stay, but for ranges first seen before refuseBefore (when
-- given): refused, and their event's dedup key written for the rest of its window. Returns what stays and what was
-- refused.
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
  for line in string.gmatch(lines, '[^\n]+') do
    local from, to, at, source, seen, digest = string.match(line, AHEAD)
    if not from then
      -- (not a line this script writes: dropped)
    elseif tonumber(to) <= gen and at == url then
      covered[#covered + 1] = { from, to, at, source }
    elseif refuseBefore and tonumber(seen) < refuseBefore then
      refused[#refused + 1] = from .. '\t' .. to
      local window = tonumber(seen) + dedupMs - timestamp
      if digest ~= '' and window > 0 then rcall('SET', dedupPrefix .. unhex(digest), 1, 'PX', window) end
    else
      left[#left + 1] = line
    end
  end
  table.sort(covered, function(x, y) return tonumber(x[1]) < tonumber(y[1]) end)
  for _, range in ipairs(covered) do count(scope, range[1], range[2], range[3], range[4], hook, true, 'webhook') end
  if #left == 0 then rcall('HDEL', ahead, scope) else rcall('HSET', ahead, scope, table.concat(left, '\n')) end
  return #left, table.concat(refused, '\n')
end
-- A delivery's ranges: those the generation of their server covers count now, the others wait for it; one below
-- its watermark that lies in a gap no worker took yet fills it. True when a repeat of the event would be answered
-- by its ranges alone: it has some, and every one was kept (counted, waiting, handed over already).
local function track(ranges, hook, digest)
  if ranges == '' then return false end
  local visible = true
  for scope, from, to, url, source in string.gmatch(ranges, RANGE) do
    local mark = rcall('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then
      local gen, at = serverGenOf(scope)
      if gen and at == url and tonumber(to) <= gen then
        count(scope, from, to, url, source, hook, true, 'webhook')
      elseif not pend(scope, from, to, url, source, hook, digest) then
        visible = false
      end
    elseif fills(scope, from, to, url) then
      cover(scope, from, to, 'webhook')
    end
  end
  return visible
end
-- An activity of a service, recorded with the time.
local function record(field)
  if field ~= '' and (rcall('HEXISTS', activity, field) == 1 or rcall('HLEN', activity) < MAX_ACTIVITY_FIELDS) then
    rcall('HSET', activity, field, timestamp)
  end
end
-- Ranges the server reported itself: they raise its generations and count (their gaps due at once).
local function reserve(ranges, hook)
  for scope, from, to, url, source in string.gmatch(ranges, RANGE) do
    confirm(scope, to, url, hook, nil)
    count(scope, from, to, url, source, hook, false, source == 'poll' and 'poll' or 'backfill')
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
-- The job id of a new event, or nil for a repeat within the window (its dedup key is there, or the key of the
-- earlier layout). One look for the dedup keys and a job holding the event id; the dedup keys alone when one
-- of the three is there.
local function newJobId(queue, dedupKey, legacyKey, eventId, hook)
  local found = rcall('EXISTS', dedupKey, legacyKey, queue.prefix .. eventId)
  if found >= 2 or (found == 1 and rcall('EXISTS', dedupKey, legacyKey) == 1) then return nil end
  return found == 0 and eventId or (eventId .. '-' .. hook .. '-' .. time36)
end
-- An event: 0 a repeat, 2 its ranges handed over already, 1 a new job (its ranges tracked).
local function accept(queue, eventId, hook, name, data, ranges, digest)
  local dedupKey = dedupPrefix .. digest
  local jobId = newJobId(queue, dedupKey, queue.prefix .. 'de:' .. hook .. ':' .. eventId, eventId, hook)
  if not jobId then return 0 end
  if not fresh(ranges) then return 2 end
  addJob(queue, jobId, name, data)
  rcall('XADD', KEYS[6], '*', 'j', jobId, 'd', data)
  -- Only a complete job marks the event seen: when Redis fails the script midway, the retry writes it. The key's
  -- presence is the mark; 1 is Redis's smallest value (a shared integer) for the window it is kept.
  if not track(ranges, hook, digest) then rcall('SET', dedupKey, 1, 'PX', dedupMs) end
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
    answers[i + 1] = accept(queueOf(q), ARGV[a + 2], hook, ARGV[a + 4], ARGV[a + 5], ranges, ARGV[a + 8])
  end
end
for _, queue in pairs(queues) do finish(queue) end
return answers
