-- A stream lane's dead letter (lane-log.ts): the event of a log entry the lane gave up on becomes a failed job of the
-- route's queue, as BullMQ's moveToFinished leaves a job that failed its last try (its hash, the failed set, a
-- `failed` event), and the entry is acknowledged in the lane's group, in one call: a receiver that dies meanwhile
-- leaves both or neither. When the queue holds a job of that id already (a replay of it), only the acknowledgement.
--
-- KEYS: 1 the event log, 2 the job's key, 3 failed, 4 events, 5 meta.
-- ARGV: 1 the group, 2 the entry id, 3 the job id, 4 its name, 5 its data, 6 its options (JSON), 7 the time (ms),
-- 8 the failed reason.
-- Returns 1 when the job was written, 0 when one was there.

local rcall = redis.call
rcall('XACK', KEYS[1], ARGV[1], ARGV[2])
if rcall('EXISTS', KEYS[2]) == 1 then return 0 end
rcall('HSET', KEYS[2], 'name', ARGV[4], 'data', ARGV[5], 'opts', ARGV[6], 'timestamp', ARGV[7], 'delay', '0', 'priority',
  '0', 'processedOn', ARGV[7], 'finishedOn', ARGV[7], 'failedReason', ARGV[8], 'stacktrace', '[]', 'atm', 1, 'ats', 1)
rcall('ZADD', KEYS[3], ARGV[7], ARGV[3])
local maxEvents = rcall('HGET', KEYS[5], 'opts.maxLenEvents') or 10000
rcall('XADD', KEYS[4], 'MAXLEN', '~', maxEvents, '*', 'event', 'failed', 'jobId', ARGV[3], 'failedReason', ARGV[8], 'prev',
  'active')
return 1
