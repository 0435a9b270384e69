-- A participant's competition rank on the ladder, or nil. KEYS[1] ladder, ARGV[1] id.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then return false end
return redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score) + 1
