-- A Survey123 webhook closes the submission of a parent (submission-store.ts, which loads it): due at once when its
-- parent is kept, else marked for when it is. KEYS: the due set, the GlobalID index. ARGV: prefix, now (ms),
-- `<hook>\n<GlobalID>`, the hook, the GlobalID, how long a mark is kept (ms). Returns 1 when it closed one, 0 when marked.
local due, byGlobalId = KEYS[1], KEYS[2]
local prefix, now, parentOf, hook, globalId, keep = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local id = redis.call('HGET', byGlobalId, parentOf)
if id then
  local parts = prefix .. ':submissions:parts:' .. id
  if redis.call('HEXISTS', parts, 'parent') == 1 then
    redis.call('HSET', parts, 'survey123', '1')
    redis.call('ZADD', due, now, id)
    return 1
  end
end
redis.call('SET', prefix .. ':submissions:survey123:' .. hook .. ':' .. globalId, '1', 'PX', keep)
return 0
