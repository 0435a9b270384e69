-- Create an account unless its name key or its player id is taken; list a claimed guest's
-- rating on the ladder if it has one (the ladder holds accounts only).
-- KEYS[1] accounts hash (id -> account JSON)   KEYS[2] account names hash (name key -> id)
-- KEYS[3] ladder sorted set                   KEYS[4] ladder scores hash (id -> -score)
-- ARGV[1] player id  ARGV[2] name key  ARGV[3] account JSON
-- Returns 1 if created, 0 if not.
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 0 end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
local score = redis.call('HGET', KEYS[4], ARGV[1])
if score then redis.call('ZADD', KEYS[3], score, ARGV[1]) end
return 1
