-- Sets a resolve job's data as BullMQ's `Job.updateData` does, if the job is still there (batch-commit.ts, which loads
-- it, queues it in the MULTI that writes the batch's previous values). KEYS: the job's hash. ARGV: its data as JSON.
-- Returns 1 when set, -1 when the job is gone.

if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
redis.call('HSET', KEYS[1], 'data', ARGV[1])
return 1
