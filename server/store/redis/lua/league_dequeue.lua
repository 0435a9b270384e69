-- Take a player out of the queue. KEYS[1] queue hash, KEYS[2] names hash, KEYS[3] last-seen
-- sorted set; ARGV[1] player id. Returns 1 if it was queued.
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])
