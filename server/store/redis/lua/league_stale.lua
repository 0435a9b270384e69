-- Mark the pending tables noted at or before ARGV[1] as being abandoned ("-") and return every
-- room so marked. KEYS[1] pending tables hash (room id -> time noted, or "-": abandoning).
local before = tonumber(ARGV[1])
local all = redis.call('HGETALL', KEYS[1])
local marked = {}
for i = 1, #all, 2 do
  local at = all[i + 1]
  if at == '-' or tonumber(at) <= before then
    if at ~= '-' then redis.call('HSET', KEYS[1], all[i], '-') end
    marked[#marked + 1] = all[i]
  end
end
return marked
