-- Change events' claim of ranges (range-claims.ts, which loads it). KEYS: the watermarks, the ranges resolved, the
-- ranges pending, the watermarks' origins (hashes, by scope). ARGV: the origin of generations no line covers (moved
-- before origins were recorded), the time, then the scopes.
--
-- For each scope not resolving a range already: a scope seen for the first time starts at its watermark (what came
-- before is not replayed); one whose watermark moved past what is resolved claims `(resolved, end]`, recorded as
-- pending, and is resolved up to `end`: the watermark, or sooner where the origin of the generations changes (the
-- origins' lines the accept script writes, `to\torigin`), so that a range reached geohook one way. The lines a claim
-- passes are dropped. Returns scope, from, to, origin quadruples.

local watermarks, resolved, pending, origins = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- The lines of a scope's origins, each {to, origin}.
local function originsOf(scope)
  local lines = {}
  for to, origin in string.gmatch(redis.call('HGET', origins, scope) or '', '(%d+)\t(%a+)') do
    lines[#lines + 1] = { to, origin }
  end
  return lines
end
-- Drops the lines of a scope at or below generation upTo.
local function dropOrigins(scope, lines, upTo)
  local left = {}
  for _, line in ipairs(lines) do
    if tonumber(line[1]) > tonumber(upTo) then left[#left + 1] = line[1] .. '\t' .. line[2] end
  end
  if #left == #lines then return end
  if #left == 0 then redis.call('HDEL', origins, scope) else redis.call('HSET', origins, scope, table.concat(left, '\n')) end
end
local claimed = {}
for i = 3, #ARGV do
  local scope = ARGV[i]
  if redis.call('HEXISTS', pending, scope) == 0 then
    local mark = redis.call('HGET', watermarks, scope)
    if mark then
      local done = redis.call('HGET', resolved, scope)
      if not done then
        redis.call('HSET', resolved, scope, mark)
        dropOrigins(scope, originsOf(scope), mark)
      elseif tonumber(mark) > tonumber(done) then
        local lines = originsOf(scope)
        local upTo, origin = mark, ARGV[1]
        for _, line in ipairs(lines) do
          if tonumber(line[1]) > tonumber(done) then
            if tonumber(line[1]) < tonumber(mark) then upTo = line[1] end
            origin = line[2]
            break
          end
        end
        redis.call('HSET', pending, scope, done .. '\t' .. upTo .. '\t' .. ARGV[2] .. '\t' .. origin)
        redis.call('HSET', resolved, scope, upTo)
        dropOrigins(scope, lines, upTo)
        claimed[#claimed + 1] = scope
        claimed[#claimed + 1] = done
        claimed[#claimed + 1] = upTo
        claimed[#claimed + 1] = origin
      end
    end
  end
end
return claimed
