/** Queues the script writes to: the three event queues, then the backfill queue. */
export const SCRIPT_QUEUES = 4;

/** Values per request in ARGV. */
export const PER_REQUEST = 7;

/** Values in ARGV before the requests': six settings, then the key prefix of each queue. */
export const HEADER = 6 + SCRIPT_QUEUES;

/** What a request asks of the script, in its first value (the event queues are 1 to 3). */
export const Operation = {
  /** Ranges the server reported itself (`changeTrackingInfo`): they raise the server generations and count. */
  reserve: 0,
  /** A server generation read to confirm the ranges waiting ahead of it: raised, without counting a range. */
  confirm: -1,
} as const;

/** Longest list of ranges one scope may have waiting for its server (a bound on what invented ranges can hold). */
const MAX_AHEAD = 1000;

/** Most services the activity hash records: a new one past this is not recorded (a bound on invented names). */
export const MAX_ACTIVITY_FIELDS = 10_000;

/**
 * The acknowledgement's write, for a batch of accepted events (see `JobWriter`): one script call that, per
 * event, answers a repeat from the hook's dedup key, or from the watermarks when every range of server
 * generations the event covers was handed over already (docs/backfill.md), or else writes the BullMQ job and
 * tracks its ranges. The job id is the event id, unless a job already holds it (the same bytes on another hook,
 * or a job kept past the window): then `<event id>-<hook>-<time>`. A range is handed over already when it ends
 * at or below its watermark, or is exactly a range waiting for its server (a second webhook's delivery of it).
 *
 * A range counts (moves its watermark) only once its server vouched for it: when it ends at or below the
 * scope's server generation, as the server itself last reported it at the range's service URL (`server-gens`,
 * `<generation>\t<service URL>` by scope). One that ends past it waits
 * in `ahead` and a `confirm` job on the backfill queue (id `confirm-<sha1 of scope>`, one at a time) reads
 * the server's generation; the ranges it covers then count in order, those it never covers are refused by the
 * worker after a while. So no payload moves a watermark past what the server has. A counted range that starts
 * past its watermark leaves a gap: a job on the backfill queue (id `gap-<sha1>` of scope and gap, once) for the
 * generations in between.
 *
 * The jobs are those BullMQ's `addStandardJob` writes for a job with an id of its own (see `job-script.ts`):
 * the hash (`name`, `data`, `opts` as `cjson` encodes them, `timestamp`, `delay`, `priority`), `added` and
 * `waiting` on the events stream, the id on the wait list, the marker unless the queue is paused or at its
 * concurrency, and the job counter raised. What BullMQ looks up per job (the queue's meta) is looked up once
 * per queue and call, and the counter raised once by the call's count.
 *
 * Each request may also name an activity (`<what>\t<service>`): its field of the activity hash is set to the
 * time, whatever the answer (a new field only while the hash has fewer than {@link MAX_ACTIVITY_FIELDS}).
 *
 * KEYS: the watermarks, the activity, the server generations and the ranges ahead (hashes). The queues' keys
 * are made in the script from their key prefixes (as BullMQ's own scripts make a job's keys): on a Redis
 * Cluster they share the prefix's hash tag.
 * ARGV: 1 dedup window (ms), 2 the time (ms), 3 the same in base 36, 4 BullMQ's msgpacked job options, 5 those
 * of gap jobs, 6 those of confirm jobs, 7-10 the key prefixes (`<prefix>:<queue>:`) of the three event queues
 * and the backfill queue, then seven per request: queue (1-3, the order of those prefixes; or an
 * {@link Operation}), event id, hook, job name, job data (of `confirm`: the time before which a range still
 * ahead is refused, ms; empty: none is), ranges (`scope\tfrom\tto\tserviceUrl\tsource` lines; empty for none),
 * activity (empty for none).
 * Returns one answer per request: 0 for a repeat, 1 for a new job (and for `reserve`), 2 for a range handed over
 * already; `confirm` answers `<ranges still ahead>\n<refused from\tto lines>`.
 */
export const acceptLua = `
local rcall = redis.call
local dedupMs, timestamp, time36 = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local watermarks, activity, serverGens, ahead = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- Job options, unpacked at first use: the event queues share theirs, gap and confirm jobs have their own.
local options = {}
local function optionsOf(arg)
  options[arg] = options[arg] or cmsgpack.unpack(ARGV[arg])
  return options[arg]
end
-- Queue q (1-3 the event queues, ${SCRIPT_QUEUES} the backfill queue), made at first use.
local queues = {}
local function queueOf(q)
  local queue = queues[q]
  if not queue then
    local prefix = ARGV[${HEADER - SCRIPT_QUEUES} + q]
    queue = { prefix = prefix, opts = optionsOf(q == ${SCRIPT_QUEUES} and 5 or 4), events = prefix .. 'events', added = 0 }
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
local RANGE = '([^\\t\\n]+)\\t(%d+)\\t(%d+)\\t([^\\t\\n]*)\\t([^\\n]*)'
local AHEAD = '(%d+)\\t(%d+)\\t([^\\t\\n]*)\\t([^\\t\\n]*)\\t(%d+)'
-- True when some range is neither below its watermark nor the very range of one waiting for its server.
local function fresh(ranges)
  if ranges == '' then return true end
  for scope, from, to in string.gmatch(ranges, RANGE) do
    local mark = rcall('HGET', watermarks, scope)
    if not mark or tonumber(to) > tonumber(mark) then
      local waiting = rcall('HGET', ahead, scope)
      if not waiting or not string.find('\\n' .. waiting, '\\n' .. from .. '\\t' .. to .. '\\t', 1, true) then return true end
    end
  end
  return false
end
-- A range the server vouched for moves its watermark; one starting past it leaves a gap for the backfill.
local function count(scope, from, to, url, source, hook)
  local mark = rcall('HGET', watermarks, scope)
  if mark and tonumber(to) <= tonumber(mark) then return end
  if mark and tonumber(from) > tonumber(mark) then
    local jobId = 'gap-' .. redis.sha1hex(scope .. '\\t' .. mark .. '\\t' .. from)
    local gaps = queueOf(${SCRIPT_QUEUES})
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
  local line = from .. '\\t' .. to .. '\\t' .. url .. '\\t' .. source .. '\\t' .. timestamp
  if not lines then
    rcall('HSET', ahead, scope, line)
  elseif select(2, string.gsub(lines, '\\n', '')) + 1 < ${MAX_AHEAD} then
    rcall('HSET', ahead, scope, lines .. '\\n' .. line)
  end
  local confirms = queueOf(${SCRIPT_QUEUES})
  local jobId = 'confirm-' .. redis.sha1hex(scope)
  if rcall('EXISTS', confirms.prefix .. jobId) == 0 then
    addJob(confirms, jobId, 'confirm', cjson.encode({ scope = scope, hook = hook, serviceUrl = url }), optionsOf(6))
  end
end
-- A scope's server generation as last read, and the URL of the service it was read at.
local function serverGenOf(scope)
  local value = rcall('HGET', serverGens, scope)
  if not value then return nil, nil end
  local gen, url = string.match(value, '^(%d+)\\t(.*)$')
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
    rcall('HSET', serverGens, scope, gen .. '\\t' .. url)
  end
  -- (A server without the service reads 0: it confirms nothing, and leaves no trace.)
  local lines = rcall('HGET', ahead, scope)
  if not lines then return 0, '' end
  local covered, left, refused = {}, {}, {}
  for from, to, at, source, seen in string.gmatch(lines, AHEAD) do
    if tonumber(to) <= gen and at == url then
      covered[#covered + 1] = { from, to, at, source }
    elseif refuseBefore and tonumber(seen) < refuseBefore then
      refused[#refused + 1] = from .. '\\t' .. to
    else
      left[#left + 1] = table.concat({ from, to, at, source, seen }, '\\t')
    end
  end
  table.sort(covered, function(x, y) return tonumber(x[1]) < tonumber(y[1]) end)
  for _, range in ipairs(covered) do count(scope, range[1], range[2], range[3], range[4], hook) end
  if #left == 0 then rcall('HDEL', ahead, scope) else rcall('HSET', ahead, scope, table.concat(left, '\\n')) end
  return #left, table.concat(refused, '\\n')
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
local answers = {}
for i = 0, (#ARGV - ${HEADER}) / ${PER_REQUEST} - 1 do
  local a = ${HEADER} + i * ${PER_REQUEST}
  local q = tonumber(ARGV[a + 1])
  local queue, eventId, hook, ranges = q > 0 and queueOf(q) or nil, ARGV[a + 2], ARGV[a + 3], ARGV[a + 6]
  local dedupKey = queue and (queue.prefix .. 'de:' .. hook .. ':' .. eventId)
  local field = ARGV[a + 7]
  if field ~= '' and (rcall('HEXISTS', activity, field) == 1 or rcall('HLEN', activity) < ${MAX_ACTIVITY_FIELDS}) then
    rcall('HSET', activity, field, timestamp)
  end
  -- One look for the hook's dedup key and a job holding the event id; the dedup key alone when one is there.
  local found = queue and rcall('EXISTS', dedupKey, queue.prefix .. eventId)
  if q == ${Operation.reserve} then
    for scope, from, to, url, source in string.gmatch(ranges, RANGE) do
      confirm(scope, to, url, hook, nil)
      count(scope, from, to, url, source, hook)
    end
    answers[i + 1] = 1
  elseif q == ${Operation.confirm} then
    local refuseBefore = ARGV[a + 5] ~= '' and tonumber(ARGV[a + 5]) or nil
    local left, refused = 0, {}
    for scope, _, to, url in string.gmatch(ranges, RANGE) do
      local stays, gone = confirm(scope, to, url, hook, refuseBefore)
      left = left + stays
      if gone ~= '' then refused[#refused + 1] = gone end
    end
    answers[i + 1] = left .. '\\n' .. table.concat(refused, '\\n')
  elseif found == 2 or (found == 1 and rcall('EXISTS', dedupKey) == 1) then
    answers[i + 1] = 0
  elseif not fresh(ranges) then
    answers[i + 1] = 2
  else
    addJob(queue, found == 0 and eventId or (eventId .. '-' .. hook .. '-' .. time36), ARGV[a + 4], ARGV[a + 5])
    -- Only a complete job marks the event seen: when Redis fails the script midway, the retry writes it. The
    -- key's presence is the mark; 1 is Redis's smallest value (a shared integer) for the 24 h it is kept.
    rcall('SET', dedupKey, 1, 'PX', dedupMs)
    track(ranges, hook)
    answers[i + 1] = 1
  end
end
for _, queue in pairs(queues) do
  if queue.added > 0 then rcall('INCRBY', queue.prefix .. 'id', queue.added) end
end
return answers
`;
