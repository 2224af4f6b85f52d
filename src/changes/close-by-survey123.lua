-- A Survey123 webhook closes the submission of a parent (submission-store.ts, which loads it): due at once when its
-- parent is kept (in full or as a reference), else marked for when it is (and the key saying that some webhook
-- waits set for as long). KEYS: the due set, this period's parents, the last period's parents, that key. ARGV: prefix, now (ms), `<hook>\n<GlobalID>`, the hook, the GlobalID, how long a mark is
-- kept (ms), how long parts are kept (ms). Returns 1 when it closed one, 0 when marked.
local due, parents, lastParents = KEYS[1], KEYS[2], KEYS[3]
local prefix, now, parentOf, hook, globalId, keep, partsKept =
  ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]), tonumber(ARGV[7])
local id = redis.call('HGET', parents, 'g:' .. parentOf) or redis.call('HGET', lastParents, 'g:' .. parentOf)
if id then
  local parts = prefix .. ':submissions:parts:' .. id
  local kept = redis.call('HEXISTS', parts, 'parent') == 1 or redis.call('HEXISTS', parents, id) == 1
    or redis.call('HEXISTS', lastParents, id) == 1
  if kept then
    -- A parent kept as a reference names its service's scope (`<hook> <service>`), which gates the claim.
    local ref = redis.call('HGET', parents, id) or redis.call('HGET', lastParents, id)
    local refHook, refService = string.match(ref or '', '^([^\t]*)\t([^\t]*)')
    if refHook then redis.call('HSETNX', parts, 'service', refHook .. ' ' .. refService) end
    redis.call('HSET', parts, 'survey123', '1')
    redis.call('PEXPIRE', parts, partsKept)
    redis.call('ZADD', due, now, id)
    return 1
  end
end
redis.call('SET', prefix .. ':submissions:survey123:' .. hook .. ':' .. globalId, '1', 'PX', keep)
redis.call('SET', KEYS[4], '1', 'PX', keep)
return 0
