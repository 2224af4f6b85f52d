-- Claims the submissions due (submission-store.ts, which loads it): each moved `lease` ms on, so that another
-- receiver takes it only if this one dies before it is written. KEYS: the due set. ARGV: now (ms), lease (ms), the
-- most to claim. Returns their ids.
local due = KEYS[1]
local now, lease, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ids = redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, limit)
for _, id in ipairs(ids) do redis.call('ZADD', due, now + lease, id) end
return ids
