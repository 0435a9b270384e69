-- Claim up to ARGV[2] rooms due at ARGV[1] by moving their deadline to ARGV[3] (the lease end).
-- KEYS[1] one shard's deadline sorted set. Atomic, so concurrent claimers never share a room.
-- Returns {claimed rooms, the shard's earliest deadline afterwards or false if it is empty};
-- the second part is the claimer's hint of when to look at this shard again.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, room in ipairs(due) do
  redis.call('ZADD', KEYS[1], ARGV[3], room)
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local nxt = false
if first[2] then nxt = first[2] end
return {due, nxt}
