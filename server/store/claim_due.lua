-- Claim up to ARGV[2] rooms due at ARGV[1] by moving their deadline to ARGV[3] (the lease end).
-- KEYS[1] global deadline sorted set. Atomic, so concurrent claimers never share a room.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, room in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[3], room)
end
return due
