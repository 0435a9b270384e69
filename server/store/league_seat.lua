-- Seat whole tables: each only if all its players are still queued (with the expected entry).
-- KEYS[1] queue hash  KEYS[2] queue names hash  KEYS[3] pending tables hash
-- KEYS[4] queue last-seen sorted set
-- KEYS[5..] the assignment key of every player, table after table, in ARGV order
-- ARGV[1] assignment ttl (ms)  ARGV[2] table count; then per table: room id, player count,
--   and per player: id, expected encoded entry ("" = any entry)
-- Returns one 1/0 per table. A failed table writes nothing.
local ttl = ARGV[1]
local tables = tonumber(ARGV[2])
local a = 3
local k = 5
local result = {}
for t = 1, tables do
  local room = ARGV[a]
  local count = tonumber(ARGV[a + 1])
  local ok = 1
  for p = 0, count - 1 do
    local current = redis.call('HGET', KEYS[1], ARGV[a + 2 + 2 * p])
    local wanted = ARGV[a + 3 + 2 * p]
    if not current or (wanted ~= '' and current ~= wanted) then
      ok = 0
      break
    end
  end
  if ok == 1 then
    for p = 0, count - 1 do
      local id = ARGV[a + 2 + 2 * p]
      redis.call('HDEL', KEYS[1], id)
      redis.call('HDEL', KEYS[2], id)
      redis.call('ZREM', KEYS[4], id)
      redis.call('SET', KEYS[k + p], room, 'PX', ttl)
    end
    redis.call('HDEL', KEYS[3], room)
  end
  result[t] = ok
  a = a + 2 + 2 * count
  k = k + count
end
return result
