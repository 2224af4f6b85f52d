-- Writes features' previous values (previous-values.ts, which loads it), unless the store holds a newer version: a
-- range resolved out of order never overwrites newer values. KEYS: the layer's store (a hash, by object id). ARGV:
-- per feature the object id, the generation, the GlobalID (or ''), and the value ('' deletes). A GlobalID is also
-- indexed (`g:<GlobalID>` -> object id), as ArcGIS Online names deleted features by it. Returns how many were written.
--
-- The features are taken in order, as if written one by one (a later one of the same object id sees the earlier), but
-- the store is read with one HMGET and written with one HSET and one HDEL: what each field holds last.

local key = KEYS[1]
local ids = {}
for i = 1, #ARGV, 4 do ids[#ids + 1] = ARGV[i] end
if #ids == 0 then return 0 end
local stored = redis.call('HMGET', key, unpack(ids))
-- By object id: the generation its value has as the features are taken (false: none, deleted).
local gens = {}
-- By field (object id, `g:<GlobalID>`): what it holds last (false: deleted), in the order first touched.
local final, order = {}, {}
local function put(field, value)
  if final[field] == nil then order[#order + 1] = field end
  final[field] = value
end
local written = 0
for n, field in ipairs(ids) do
  local i = n * 4 - 3
  local gen, globalId, value = tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3]
  local current = gens[field]
  if current == nil then current = stored[n] and tonumber(string.match(stored[n], '^(%d+)')) or false end
  if current and current > gen then
    gens[field] = current
  else
    local deleted = value == ''
    gens[field] = not deleted and gen
    put(field, not deleted and value)
    if globalId ~= '' then put('g:' .. globalId, not deleted and field) end
    written = written + 1
  end
end
local sets, deletes = {}, {}
for _, field in ipairs(order) do
  local value = final[field]
  if value then
    sets[#sets + 1] = field
    sets[#sets + 1] = value
  else
    deletes[#deletes + 1] = field
  end
end
if #sets > 0 then redis.call('HSET', key, unpack(sets)) end
if #deletes > 0 then redis.call('HDEL', key, unpack(deletes)) end
return written
