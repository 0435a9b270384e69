-- Take the pending tables noted at or before ARGV[1]: remove and return their room ids.
-- KEYS[1] pending tables hash (room id -> time noted).
local before = tonumber(ARGV[1])
local all = redis.call('HGETALL', KEYS[1])
local stale = {}
for i = 1, #all, 2 do
  if tonumber(all[i + 1]) <= before then
    stale[#stale + 1] = all[i]
    redis.call('HDEL', KEYS[1], all[i])
  end
end
return stale
