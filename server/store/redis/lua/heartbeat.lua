-- Swap the service heartbeat: KEYS[1] hash {t=time, p=previous time, n=nonce of the last call}.
-- ARGV[1] now, ARGV[2] nonce of this call. Returns the previous time (nil if none).
-- A client retry of the same call (same nonce) returns the same answer instead of "now",
-- which would hide an outage.
if redis.call('HGET', KEYS[1], 'n') == ARGV[2] then
  local p = redis.call('HGET', KEYS[1], 'p')
  if p == '' then return false end
  return p
end
local previous = redis.call('HGET', KEYS[1], 't')
redis.call('HSET', KEYS[1], 't', ARGV[1], 'p', previous or '', 'n', ARGV[2])
return previous
