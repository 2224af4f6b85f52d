-- Releases a scope's pending range once resolved (or failed for good), if it is still that range (range-claims.ts,
-- which loads it). KEYS: the ranges pending. ARGV: the scope, the start of its pending line (`from\tto\t`).
-- Returns 1 when released, 0 when the scope was pending another range, or none.

local current = redis.call('HGET', KEYS[1], ARGV[1])
if current and string.sub(current, 1, #ARGV[2]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
