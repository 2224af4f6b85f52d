-- Records parts of submissions (submission-store.ts, which loads it). KEYS: the due set, the GlobalID index.
-- ARGV: prefix, now (ms), window (ms), parts kept (ms), then per part: the submission id, its field (`parent`,
-- `r:…`, `a:…`), its JSON, and the parent's `<hook>\n<GlobalID>` (a parent) or ''. A part already kept is left as
-- it is. A submission with its parent and another part (or a Survey123 webhook) is due `window` after its last new
-- part (one the Survey123 webhook closed is made due at once when its range is written). Returns how many parts were new.
local due, byGlobalId = KEYS[1], KEYS[2]
local prefix, now, window, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local touched, added = {}, 0
for i = 5, #ARGV, 4 do
  local id, field, json, parentOf = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local parts = prefix .. ':submissions:parts:' .. id
  if redis.call('HSETNX', parts, field, json) == 1 then
    added = added + 1
    touched[id] = true
    if field ~= 'parent' then redis.call('HINCRBY', parts, 'extras', 1) end
  end
  redis.call('PEXPIRE', parts, keep)
  if parentOf ~= '' then
    redis.call('HSET', byGlobalId, parentOf, id)
    local hook, globalId = string.match(parentOf, '^(.-)\n(.*)$')
    local mark = prefix .. ':submissions:survey123:' .. hook .. ':' .. globalId
    if redis.call('EXISTS', mark) == 1 then
      redis.call('HSET', parts, 'survey123', '1')
      redis.call('DEL', mark)
      touched[id] = true
    end
  end
end
for id in pairs(touched) do
  local parts = prefix .. ':submissions:parts:' .. id
  local fields = redis.call('HMGET', parts, 'parent', 'extras', 'survey123')
  if fields[1] and (fields[2] or fields[3]) then
    redis.call('ZADD', due, now + window, id)
  end
end
return added
