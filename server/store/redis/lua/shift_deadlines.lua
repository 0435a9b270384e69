-- Add ARGV[1] seconds to every deadline in KEYS[1] (one shard); returns how many were shifted.
-- One script so a concurrent claim or commit on the shard sees all of it shifted or none.
local rooms = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, room in ipairs(rooms) do
  redis.call('ZINCRBY', KEYS[1], ARGV[1], room)
end
return #rooms
