-- Claims the submissions due (submission-store.ts, which loads it): each moved `lease` ms on, so that another
-- receiver takes it only if this one dies before it is written. A submission closes only once the resolver has
-- resolved every edit that could still belong to it: its gate, the watermarks of its service's scopes when it first
-- became due (its window passed, or its Survey123 webhook came), fixed then. One whose scope is resolved short of its
-- gate is held, in that scope's held set scored by the generation it waits for, until a later call finds the scope
-- resolved that far (or it was held `maxHold` ms: it then closes with what it has).
-- KEYS: the due set, the watermarks, the ranges resolved, the ranges pending, the held submissions' deadlines, the
-- scopes holding some. ARGV: prefix, now (ms), lease (ms), the most to claim, the longest hold (ms). Returns their ids.
local due, watermarks, resolved, pending, held, holding = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local prefix, now, lease, limit, maxHold = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local function heldIn(scope) return prefix .. ':submissions:held:' .. scope end
local function partsOf(id) return prefix .. ':submissions:parts:' .. id end

-- The generation a scope is resolved to: the start of its pending range, else its resolved mark; nil when the scope
-- is not followed (no edit of it will be resolved: none to wait for).
local function resolvedUpTo(scope)
  local range = redis.call('HGET', pending, scope)
  if range then return tonumber(string.match(range, '^(%d+)')) end
  local mark = redis.call('HGET', resolved, scope)
  return mark and tonumber(mark)
end

-- Held submissions whose scope caught up, or held too long, are due again (NX: one a new part made due later keeps
-- its window).
local function release(id)
  redis.call('ZREM', held, id)
  redis.call('ZADD', due, 'NX', now, id)
end
for _, scope in ipairs(redis.call('SMEMBERS', holding)) do
  local key, upTo = heldIn(scope), resolvedUpTo(scope)
  local ready = upTo and redis.call('ZRANGEBYSCORE', key, '-inf', upTo) or redis.call('ZRANGE', key, 0, -1)
  for _, id in ipairs(ready) do
    release(id)
    redis.call('ZREM', key, id)
  end
  if redis.call('ZCARD', key) == 0 then redis.call('SREM', holding, scope) end
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', held, '-inf', now)) do
  local parts = partsOf(id)
  for scope in string.gmatch(redis.call('HGET', parts, 'gate') or '', '([^\t\n]+)\t%d+') do
    redis.call('ZREM', heldIn(scope), id)
  end
  if redis.call('EXISTS', parts) == 1 then redis.call('HSET', parts, 'gate', '') end
  release(id)
end

-- A service's gate: `scope\twatermark` lines of its scopes (`<hook> <service>`, with `#<layer>` on ArcGIS Online).
local marks, gates = nil, {}
local function gateOf(service)
  if not service then return '' end
  if gates[service] then return gates[service] end
  marks = marks or redis.call('HGETALL', watermarks)
  local lines = {}
  for i = 1, #marks, 2 do
    local scope = marks[i]
    if scope == service or string.sub(scope, 1, #service + 1) == service .. '#' then
      lines[#lines + 1] = scope .. '\t' .. marks[i + 1]
    end
  end
  gates[service] = table.concat(lines, '\n')
  return gates[service]
end

local claimed = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, limit)) do
  local fields = redis.call('HMGET', partsOf(id), 'gate', 'service')
  local gate = fields[1]
  if not gate then
    gate = gateOf(fields[2])
    -- Kept with the parts (which expire); parts without a service (gone, or recorded before gates) have none.
    if fields[2] then redis.call('HSET', partsOf(id), 'gate', gate) end
  end
  local waitsFor, generation = nil, nil
  for scope, mark in string.gmatch(gate, '([^\t\n]+)\t(%d+)') do
    local upTo = resolvedUpTo(scope)
    if upTo and upTo < tonumber(mark) then
      waitsFor, generation = scope, mark
      break
    end
  end
  if waitsFor then
    redis.call('ZREM', due, id)
    redis.call('ZADD', heldIn(waitsFor), generation, id)
    redis.call('SADD', holding, waitsFor)
    redis.call('ZADD', held, 'NX', now + maxHold, id)
  else
    redis.call('ZADD', due, now + lease, id)
    claimed[#claimed + 1] = id
  end
end
return claimed
