-- Deletes a scope's failed range when `(from, to]` covers it (failed-ranges.ts, which loads it). KEYS: the failed
-- ranges (a hash, by scope, each a JSON object with `from` and `to`). ARGV: the scope, from, to. Returns 1 when it
-- deleted it, 0 otherwise (none, another, or a value it cannot read).

local value = redis.call('HGET', KEYS[1], ARGV[1])
if not value then return 0 end
local ok, failed = pcall(cjson.decode, value)
if not ok or type(failed) ~= 'table' or tonumber(failed['from']) == nil or tonumber(failed['to']) == nil then return 0 end
if tonumber(failed['from']) < tonumber(ARGV[2]) or tonumber(failed['to']) > tonumber(ARGV[3]) then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
