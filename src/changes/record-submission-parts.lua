-- Records parts of submissions (submission-store.ts, which loads it). KEYS: the due set, this period's parents, the
-- last period's parents, the key there while a Survey123 webhook may wait for its parent. ARGV: prefix, now (ms), window (ms), parts kept (ms), parents kept (ms), the
-- service's scope (`<hook> <service>`: the claim script gates the submission on its scopes' resolution), then per part: the
-- submission id, its field (`parent`, `ref`, `r:…`, `a:…`), its JSON (a reference's encoding for `ref`), and the
-- parent's `<hook>\n<GlobalID>` (a parent) or ''. A part already kept is left as it is. A parent kept as a reference
-- is one field of this period's parents (a lone parent writes no key of its own); any other part is a field of its
-- submission's hash. A submission with its parent and another part (or a Survey123 webhook) is due `window` after its
-- last new part (one the Survey123 webhook closed is made due at once when its range is written). Returns how many
-- parts were new, then the submissions that a Survey123 webhook, waiting for their parent, closed.
local due, parents, lastParents = KEYS[1], KEYS[2], KEYS[3]
local waiting = redis.call('EXISTS', KEYS[4]) == 1
local prefix, now, window, keep, parentsKept = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local touched, added, closed = {}, 0, {}
local recordedRefs = false
local service = ARGV[6]
-- The parents' `g:<hook>\n<GlobalID>` fields, written with one HSET once the parts are taken (the loop reads none).
local parentFields = {}
for i = 7, #ARGV, 4 do
  local id, field, json, parentOf = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local parts = prefix .. ':submissions:parts:' .. id
  if field == 'ref' then
    if redis.call('HEXISTS', lastParents, id) == 0 and redis.call('HSETNX', parents, id, json) == 1 then added = added + 1 end
    recordedRefs = true
  else
    if redis.call('HSETNX', parts, field, json) == 1 then
      added = added + 1
      touched[id] = true
      if field ~= 'parent' then redis.call('HINCRBY', parts, 'extras', 1) end
    end
    redis.call('PEXPIRE', parts, keep)
  end
  if parentOf ~= '' then
    parentFields[#parentFields + 1] = 'g:' .. parentOf
    parentFields[#parentFields + 1] = id
    recordedRefs = true
    local hook, globalId = string.match(parentOf, '^(.-)\n(.*)$')
    local mark = prefix .. ':submissions:survey123:' .. hook .. ':' .. globalId
    if waiting and redis.call('EXISTS', mark) == 1 then
      redis.call('HSET', parts, 'survey123', '1')
      redis.call('PEXPIRE', parts, keep)
      redis.call('DEL', mark)
      touched[id] = true
      closed[#closed + 1] = id
    end
  end
end
if #parentFields > 0 then redis.call('HSET', parents, unpack(parentFields)) end
if recordedRefs then redis.call('PEXPIRE', parents, parentsKept) end
for id in pairs(touched) do
  local parts = prefix .. ':submissions:parts:' .. id
  local fields = redis.call('HMGET', parts, 'parent', 'extras', 'survey123')
  local parent = fields[1] or redis.call('HEXISTS', parents, id) == 1 or redis.call('HEXISTS', lastParents, id) == 1
  if parent and (fields[2] or fields[3]) then
    redis.call('HSET', parts, 'service', service)
    redis.call('ZADD', due, now + window, id)
  end
end
table.insert(closed, 1, added)
return closed
