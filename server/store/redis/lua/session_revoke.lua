-- Revoke one session and log it for the nodes' socket closers.
-- KEYS[1] the session hash  KEYS[2] the revocation log (a stream)
-- ARGV[1] session set key prefix (+ player id)  ARGV[2] the digest  ARGV[3] log length kept
-- Returns 1 if the session existed, else 0.
local player = redis.call('HGET', KEYS[1], 'p')
if not player then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', ARGV[1] .. player, ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'd', ARGV[2])
return 1
