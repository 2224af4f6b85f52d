-- Writes features' previous values (previous-values.ts, which loads it), unless the store holds a newer version: a
-- range resolved out of order never overwrites newer values. KEYS: the layer's store (a hash, by object id). ARGV:
-- per feature the object id, the generation, the GlobalID (or ''), and the value ('' deletes). A GlobalID is also
-- indexed (`g:<GlobalID>` -> object id), as ArcGIS Online names deleted features by it. Returns how many were written.

local key = KEYS[1]
local written = 0
for i = 1, #ARGV, 4 do
  local field, gen, globalId, value = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  local current = redis.call('HGET', key, field)
  local newer = current and tonumber(string.match(current, '^(%d+)')) > gen
  if not newer then
    if value == '' then
      redis.call('HDEL', key, field)
      if globalId ~= '' then redis.call('HDEL', key, 'g:' .. globalId) end
    else
      redis.call('HSET', key, field, value)
      if globalId ~= '' then redis.call('HSET', key, 'g:' .. globalId, field) end
    end
    written = written + 1
  end
end
return written
