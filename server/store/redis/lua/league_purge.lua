-- Remove and return the queued players last seen at or before ARGV[1].
-- KEYS[1] queue hash  KEYS[2] queue names hash  KEYS[3] queue last-seen sorted set
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
for _, id in ipairs(gone) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
end
return gone
