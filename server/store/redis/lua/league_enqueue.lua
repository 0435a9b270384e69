-- Queue a player (replacing its entry) unless it holds a seat assignment not yet taken.
-- KEYS[1] queue hash (id -> encoded entry)  KEYS[2] queue names hash
-- KEYS[3] queue last-seen sorted set        KEYS[4] the player's assignment
-- ARGV[1] player id  ARGV[2] encoded entry  ARGV[3] name  ARGV[4] seen time
-- Returns 1 if queued, 0 if not.
if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
return 1
